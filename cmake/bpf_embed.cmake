# Writes the BPF object IN as a C++ header OUT (VAR: an array of its bytes),
# so the program that loads it carries the object it was built with and a
# compiler cache keys the header's users on the object's contents.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}.tmp" "// Generated from ${NAME} by cmake/bpf_embed.cmake: do not edit.\n#pragma once\ninline constexpr unsigned char ${VAR}[] = {${bytes}};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
