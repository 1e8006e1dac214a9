# Writes a C++ file holding each data file as a string, keyed by its file name.
set(body "// Generated from data/*.toml by cmake/embed_data.cmake. Do not edit.\n#include \"data/embedded.h\"\n#include <string_view>\nnamespace gpuplan::data {\n")
set(table "")
foreach(f ${FILES})
  file(READ ${f} content)
  get_filename_component(name ${f} NAME)
  string(MAKE_C_IDENTIFIER ${name} ident)
  # A char array, not a string_view from the literal: the compiler's constexpr strlen would stop at
  # its loop limit (262,144) on the larger tables.
  string(APPEND body "static constexpr char k_${ident}_text[] = R\"gpuplan_data(${content})gpuplan_data\";\n")
  string(APPEND body "static constexpr std::string_view k_${ident}(k_${ident}_text, sizeof(k_${ident}_text) - 1);\n")
  string(APPEND table "  if (name == \"${name}\") return k_${ident};\n")
endforeach()
string(APPEND body "std::string_view embedded_file(std::string_view name) {\n${table}  return {};\n}\n}  // namespace gpuplan::data\n")
file(WRITE ${OUT} "${body}")
