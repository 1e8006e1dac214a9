# Writes a C++ file holding each data file as a string, keyed by its file name.
set(body "// Generated from data/*.toml by cmake/embed_data.cmake. Do not edit.\n#include \"data/embedded.h\"\n#include <string_view>\nnamespace gpuplan::data {\n")
set(table "")
foreach(f ${FILES})
  file(READ ${f} content)
  get_filename_component(name ${f} NAME)
  string(MAKE_C_IDENTIFIER ${name} ident)
  # A char array, not a constexpr string_view: the compiler's constexpr strlen stops at 256 KiB.
  string(APPEND body "static const char k_${ident}[] = R\"gpuplan_data(${content})gpuplan_data\";\n")
  string(APPEND table "  if (name == \"${name}\") return std::string_view(k_${ident}, sizeof(k_${ident}) - 1);\n")
endforeach()
string(APPEND body "std::string_view embedded_file(std::string_view name) {\n${table}  return {};\n}\n}  // namespace gpuplan::data\n")
file(WRITE ${OUT} "${body}")
