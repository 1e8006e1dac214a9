#include "net/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace gpuplan {

namespace {

struct Transfer {
  HttpResponse response;
  size_t max_body = 0;
  bool too_big = false;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (t->response.body.size() + bytes > t->max_body) {
    t->too_big = true;
    return 0;  // aborts the transfer
  }
  t->response.body.append(data, bytes);
  return bytes;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string line(data, size * n);
  const size_t colon = line.find(':');
  if (line.rfind("HTTP/", 0) == 0) t->response.headers.clear();  // a redirect's headers are not the answer's
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.erase(value.begin());
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
    t->response.headers[name] = value;
  }
  return size * n;
}

class CurlClient : public HttpClient {
 public:
  explicit CurlClient(double timeout_s) : timeout_s_(timeout_s) {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    curl_ = curl_easy_init();
  }
  ~CurlClient() override {
    if (curl_) curl_easy_cleanup(curl_);
  }

  Result<HttpResponse> get(const std::string& url, const std::vector<std::string>& headers, size_t max_body_bytes) override {
    if (!curl_) return make_error(url, "cannot start libcurl");
    Transfer t;
    t.max_body = max_body_bytes;
    curl_slist* list = nullptr;
    for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
    curl_easy_reset(curl_);  // keeps the connection cache: one TLS handshake for many range reads
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl_, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl_, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl_, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(timeout_s_, 10.0) * 1000));
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s_ * 1000));
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_USERAGENT, "gpuplan");
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &t);
    const CURLcode rc = curl_easy_perform(curl_);
    curl_slist_free_all(list);
    if (t.too_big) return make_error(url, fmt::format("the response is larger than {} bytes", max_body_bytes));
    if (rc != CURLE_OK) return make_error(url, curl_easy_strerror(rc));
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &t.response.status);
    return std::move(t.response);
  }

 private:
  double timeout_s_;
  CURL* curl_ = nullptr;
};

}  // namespace

std::unique_ptr<HttpClient> make_curl_client(double timeout_s) { return std::make_unique<CurlClient>(timeout_s); }

}  // namespace gpuplan
