# Every target of ours calls hbingest_target_defaults(); third-party code keeps its own flags.
add_library(hbingest_build_flags INTERFACE)
target_compile_options(hbingest_build_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
if(HBINGEST_WERROR)
  target_compile_options(hbingest_build_flags INTERFACE -Werror)
endif()

if(HBINGEST_SANITIZE STREQUAL "address")
  target_compile_options(hbingest_build_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(hbingest_build_flags INTERFACE -fsanitize=address,undefined)
  # UBSan checks are fatal here (no recover), so third-party headers' known findings are left out at
  # compile time; the list says why for each. GCC has no ignore list: its build reports them.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(hbingest_build_flags INTERFACE
      -fsanitize-ignorelist=${PROJECT_SOURCE_DIR}/tests/sanitizers/ubsan_ignorelist.txt)
  endif()
elseif(HBINGEST_SANITIZE STREQUAL "thread")
  # scripts/tsan.sh builds and runs it: every unit test but the Kafka ones — Debian's librdkafka
  # starts its threads with C11 thrd_create, which neither GCC 12's nor clang 14's TSan runtime
  # intercepts, and crashes inside it.
  target_compile_options(hbingest_build_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(hbingest_build_flags INTERFACE -fsanitize=thread)
elseif(NOT HBINGEST_SANITIZE STREQUAL "")
  message(FATAL_ERROR "HBINGEST_SANITIZE must be '', 'address' or 'thread', not '${HBINGEST_SANITIZE}'")
endif()

function(hbingest_target_defaults target)
  target_link_libraries(${target} PRIVATE hbingest_build_flags)
endfunction()
