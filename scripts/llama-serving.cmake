# Included by CMake after each project() of a llama.cpp build (CMAKE_PROJECT_INCLUDE): the
# engine's, when `make test` builds it (scripts/test.sh sets the variable; llama-cpp-sys-2's build
# script passes every CMAKE_* variable to CMake), llama-server's (scripts/build-llama-server.sh)
# and the tests' programs (scripts/build-backend.sh tests).
#
# llama.cpp's common library, its multimodal library and its server compile as unity builds: each
# of their dozens of files re-parsed the same large headers, nlohmann's JSON above all (llama-server
# took 467 s of an idle 2-core machine, where the plain build took about 600). HEARTH_SERVING_OPT
# (a CMake variable, else the environment's; e.g. -O0) compiles them at another level than ggml
# and llama, which write the tokens. The engine calls one function of common,
# json_schema_to_grammar, once per reply that has a JSON schema: at -O3 common was over half of the
# engine's llama.cpp build (422 of ~800 CPU-seconds), at -O0 in one unit it takes 116. A peer that
# only has to speak the wire format is built cheaply the same way, and so is cpp-httplib, which
# common links for its downloads (the engine never calls them; 30-45 CPU-seconds at -O3).
if(PROJECT_NAME STREQUAL "llama.cpp")
  if(NOT DEFINED HEARTH_SERVING_OPT)
    set(HEARTH_SERVING_OPT "$ENV{HEARTH_SERVING_OPT}")
  endif()
  function(hearth_llama_serving)
    # (json.cpp and mtmd's helpers do not compile inside another file's unit.)
    foreach(target_and_files llama-common:json.cpp mtmd:mtmd-helper.cpp,mtmd-helper-gen.cpp
                             server-context: llama-server-impl: llama-server: cpp-httplib:)
      string(REPLACE ":" ";" parts "${target_and_files}")
      list(GET parts 0 target)
      if(NOT TARGET ${target})
        continue()
      endif()
      if(NOT target STREQUAL "llama-server")
        set_target_properties(${target} PROPERTIES UNITY_BUILD ON)
      endif()
      if(HEARTH_SERVING_OPT)
        target_compile_options(${target} PRIVATE ${HEARTH_SERVING_OPT})
      endif()
      list(LENGTH parts n)
      if(n GREATER 1)
        list(GET parts 1 alone)
        string(REPLACE "," ";" alone "${alone}")
        get_target_property(dir ${target} SOURCE_DIR)
        foreach(file ${alone})
          if(EXISTS "${dir}/${file}")
            set_source_files_properties("${dir}/${file}" DIRECTORY "${dir}" PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
          endif()
        endforeach()
      endif()
    endforeach()
  endfunction()
  # HEARTH_LLAMA_OPT (the environment's; make test sets -O1) compiles llama and ggml-base at that
  # level: the tests' compute runs in ggml-cpu, kept at -O3, and -O1 takes a third less of these
  # two's CPU (llama-model.cpp: 14 CPU-seconds where -O3 took 22).
  function(hearth_llama_opt)
    if(NOT "$ENV{HEARTH_LLAMA_OPT}" STREQUAL "")
      foreach(target llama ggml-base)
        if(TARGET ${target})
          target_compile_options(${target} PRIVATE $ENV{HEARTH_LLAMA_OPT})
        endif()
      endforeach()
    endif()
  endfunction()
  # The targets are defined later in this directory's processing: change them once it is done.
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL hearth_llama_opt)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL hearth_llama_serving)
endif()
