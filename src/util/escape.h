// Text from users and data files (catalog ids, workload names, a child's command line) made safe for
// the place it is printed: HTML (every markup character an entity), Markdown (every character that
// means something there escaped), and terminals (control characters and escape sequences removed).
#pragma once

#include <string>
#include <string_view>

namespace gpuplan {

// `s` as HTML text or attribute value: & < > " ' as entities, invalid UTF-8 replaced.
std::string html_escape(std::string_view s);

// `s` as literal Markdown text, safe inside a table cell: emphasis, code, link, table and HTML
// punctuation backslash-escaped, line breaks and control characters turned into spaces.
std::string markdown_escape(std::string_view s);

// `s` fit for a terminal: ANSI/VT escape sequences dropped, other control characters (C0 except
// newline and tab, DEL, C1) dropped, invalid UTF-8 replaced.
std::string printable(std::string_view s);

}  // namespace gpuplan
