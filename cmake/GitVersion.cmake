# Generates generated/version_info.cpp at every build (not only at configure
# time) so results always name the commit the binary was built from; the file
# is rewritten only when the commit or dirty state changed.
set(TS_VERSION_CPP ${PROJECT_BINARY_DIR}/generated/version_info.cpp)
add_custom_target(ts_version_info
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${TS_VERSION_CPP}
          -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/write_version.cmake
  BYPRODUCTS ${TS_VERSION_CPP}
  COMMENT "Stamping the git commit" VERBATIM)
