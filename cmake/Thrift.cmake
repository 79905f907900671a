# hbingest_thrift_cpp(<target> <idl>): generate C++ from our own IDL into the build tree at build time
# and wrap it in a static library. Generated headers are PRIVATE to whoever links it.
function(hbingest_thrift_cpp target idl)
  get_filename_component(idl_abs "${idl}" ABSOLUTE)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/gen-cpp")
  set(sources "${out_dir}/THBaseService.cpp" "${out_dir}/hbase_types.cpp")
  add_custom_command(
    OUTPUT ${sources}
    COMMAND ${CMAKE_COMMAND} -E make_directory "${out_dir}"
    COMMAND ${THRIFT_COMPILER} --gen cpp:no_skeleton -out "${out_dir}" "${idl_abs}"
    DEPENDS "${idl_abs}"
    COMMENT "thrift: generating C++ from ${idl}"
    VERBATIM)
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} SYSTEM PUBLIC "${out_dir}")
  target_link_libraries(${target} PUBLIC PkgConfig::THRIFT)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
