include_guard(GLOBAL)
# BPF programs (XDP paths of the emulators): compiled from source by clang for
# the bpf target, and carried inside the program that loads them as a
# generated header; libbpf loads them.
find_program(FIBNIC_BPF_CLANG NAMES clang clang-19 clang-16 clang-15 clang-14)
find_path(FIBNIC_LIBBPF_INCLUDE bpf/bpf_helpers.h)
find_library(FIBNIC_LIBBPF bpf)
if(NOT FIBNIC_BPF_CLANG OR NOT FIBNIC_LIBBPF_INCLUDE OR NOT FIBNIC_LIBBPF)
  message(FATAL_ERROR "the emulators' XDP paths need clang and libbpf (Debian: clang libbpf-dev, scripts/deps/emu.txt)")
endif()

# xdp/NAME.bpf.c of the calling folder -> xdp/NAME.bpf.o in its build folder;
# further arguments: the headers it includes (xdp/...), so a change rebuilds it.
function(fibnic_bpf_object name)
  add_custom_command(
    OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/xdp/${name}.bpf.o
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/xdp
    COMMAND ${FIBNIC_BPF_CLANG} -target bpf -O2 -g -Wall -Wextra -Werror
            -I${CMAKE_SOURCE_DIR} -I${FIBNIC_LIBBPF_INCLUDE} -I/usr/include/${CMAKE_LIBRARY_ARCHITECTURE}
            -c ${CMAKE_CURRENT_SOURCE_DIR}/xdp/${name}.bpf.c -o ${CMAKE_CURRENT_BINARY_DIR}/xdp/${name}.bpf.o
    DEPENDS xdp/${name}.bpf.c ${ARGN}
    COMMENT "clang -target bpf: xdp/${name}.bpf.c")
endfunction()

# xdp/NAME.bpf.o -> HEADER (under the build folder) holding it as VAR.
function(fibnic_bpf_embed name var header)
  add_custom_command(
    OUTPUT ${header}
    COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_BINARY_DIR}/xdp/${name}.bpf.o -DOUT=${header}
            -DNAME=${name}.bpf.c -DVAR=${var} -P ${CMAKE_SOURCE_DIR}/cmake/bpf_embed.cmake
    DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/xdp/${name}.bpf.o ${CMAKE_SOURCE_DIR}/cmake/bpf_embed.cmake)
endfunction()
