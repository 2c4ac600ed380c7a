# Included by CMake after each project() of llama.cpp's build in llama-cpp-sys-2, when `make test`
# builds the engine (scripts/test.sh sets CMAKE_PROJECT_INCLUDE; the crate's build script passes
# every CMAKE_* variable to CMake).
#
# llama.cpp's `common` library is over half of that build (422 of ~800 CPU-seconds at -O3 on the
# 2-core machine), and the engine calls one function of it: json_schema_to_grammar, once per
# reply that has a JSON schema. Compiled at -O0 as a unity build (its files re-parse nlohmann's
# JSON) it takes 116. ggml and llama, which write the tokens, keep the crate's -O3.
if(PROJECT_NAME STREQUAL "llama.cpp")
  function(hearth_cheap_llama_common)
    if(TARGET llama-common)
      set_target_properties(llama-common PROPERTIES UNITY_BUILD ON)
      target_compile_options(llama-common PRIVATE -O0)
    endif()
  endfunction()
  # The target is defined later in this directory's processing: change it once it is done.
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL hearth_cheap_llama_common)
endif()
