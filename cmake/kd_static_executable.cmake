# kd_static_executable(NAME LIBS target... ARCHIVES file... [HEADERS target...])
#
# Links the executable NAME (already added) statically: no dynamic loader, no relocations and
# no shared libraries to map when it starts. LIBS are this project's static libraries, each
# before the ones it uses; ARCHIVES the system archives they need (libz.a...), looked up once;
# HEADERS header-only targets whose include paths NAME's sources need.
#
# The libraries are linked by file: as targets they would bring their shared dependencies
# (libcrypto.so...) along. Where the distribution lacks one of the archives, or a sanitizer or
# fuzzer runtime is in the build (they need the dynamic one), NAME is linked as any other
# program, against the targets. The target's KD_STATIC property says which (tests/cli).
function(kd_static_executable name)
  cmake_parse_arguments(S "" "" "LIBS;ARCHIVES;HEADERS" ${ARGN})
  set(archives "")
  set(missing "")
  foreach(archive IN LISTS S_ARCHIVES)
    string(MAKE_C_IDENTIFIER "KD_ARCHIVE_${archive}" var)
    find_library(${var} ${archive})
    if(${var})
      list(APPEND archives ${${var}})
    else()
      list(APPEND missing ${archive})
    endif()
  endforeach()
  if(KD_SANITIZE OR KD_FUZZ OR missing)
    if(missing)
      message(STATUS "${name}: linked dynamically, the system lacks ${missing}")
    endif()
    target_link_libraries(${name} PRIVATE ${S_LIBS} ${S_HEADERS})
    set_target_properties(${name} PROPERTIES KD_STATIC OFF)
    return()
  endif()
  set(files "")
  foreach(lib IN LISTS S_LIBS)
    list(APPEND files $<TARGET_FILE:${lib}>)
  endforeach()
  add_dependencies(${name} ${S_LIBS})
  target_link_libraries(${name} PRIVATE ${files} ${archives} ${S_HEADERS})
  target_link_options(${name} PRIVATE -static)
  set_target_properties(${name} PROPERTIES KD_STATIC ON)
endfunction()
