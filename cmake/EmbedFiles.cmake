# ts_embed_files(OUTPUT <cpp> (BASE <dir> | FLAT) FILES <abs paths...>
#                [HEADER <include> FUNCTION <name>]): compiles files into the
# binaries, keyed by their path relative to BASE (FLAT: by their file names,
# for files gathered from several places), so no binary depends on
# where the source tree (or a package's files) lie. By default the contract
# files of schemas/ behind ts::embedded::files() (shared/embedded_files.hpp).
function(ts_embed_files)
  cmake_parse_arguments(ARG "FLAT" "OUTPUT;BASE;HEADER;FUNCTION" "FILES" ${ARGN})
  if(NOT ARG_HEADER)
    set(ARG_HEADER shared/embedded_files.hpp)
    set(ARG_FUNCTION files)
  endif()
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ARG_OUTPUT} -DBASE=${ARG_BASE} -DFLAT=${ARG_FLAT} "-DFILES=${ARG_FILES}"
            -DHEADER=${ARG_HEADER} -DFUNCTION=${ARG_FUNCTION} -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${ARG_FUNCTION}" VERBATIM)
endfunction()
