// HTTP GET for the few places gpuplan reaches a server (the Hugging Face Hub): an interface, so
// tests and callers can substitute it, and a libcurl implementation (HTTPS, redirects, timeouts,
// a cap on what a response may hold).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace gpuplan {

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // `headers` as "Name: value". A transport failure (no route, DNS, TLS, timeout, a body over
  // `max_body_bytes`) is an Error naming `url`; any HTTP status is a response.
  virtual Result<HttpResponse> get(const std::string& url, const std::vector<std::string>& headers,
                                   size_t max_body_bytes) = 0;
};

std::unique_ptr<HttpClient> make_curl_client(double timeout_s);

}  // namespace gpuplan
