# ts_embed_files(OUTPUT <cpp> BASE <dir> FILES <abs paths...>): compiles the
# contract files (schemas, SQL migrations) into the binaries, keyed by their
# path relative to BASE, so no binary depends on where the source tree is.
function(ts_embed_files)
  cmake_parse_arguments(ARG "" "OUTPUT;BASE" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ARG_OUTPUT} -DBASE=${ARG_BASE} "-DFILES=${ARG_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${ARG_BASE}" VERBATIM)
endfunction()
