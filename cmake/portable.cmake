# SPDX-License-Identifier: MIT
# A binary built here must run on the GPU servers it is meant for, which are rarely Debian 12 (issue 20): its
# shared libraries may only be ones every current distribution ships under a stable soname (glibc's, libcurl.so.4,
# libssl.so.3/libcrypto.so.3, liblz4.so.1). spdlog and fmt change soname with every release (Ubuntu 24.04 has
# neither libspdlog.so.1.10 nor libfmt.so.9), so they are compiled in, header-only; libstdc++ and libgcc are linked
# statically so that a distribution with an older GCC runtime runs it too. tests/integration/test_install.py
# checks the result (NEEDED list, highest GLIBC_ symbol version); docs/install.md says where it runs and why.

# Debian's header-only spdlog target still names the shared fmt::fmt; every target that logs must see one fmt, the
# header-only one, or the build would mix FMT_SHARED and FMT_HEADER_ONLY objects and link libfmt.so anyway.
set_property(TARGET spdlog::spdlog_header_only PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads fmt::fmt-header-only)

# The sanitizer and fuzz builds keep the dynamic GCC runtime: their runtimes expect to interpose on it.
if(HFGET_SANITIZE OR HFGET_TSAN OR HFGET_FUZZ)
  set(HFGET_STATIC_GCC_RUNTIME_DEFAULT OFF)
else()
  set(HFGET_STATIC_GCC_RUNTIME_DEFAULT ON)
endif()
option(HFGET_STATIC_GCC_RUNTIME "Link libstdc++ and libgcc statically into hfget (a portable binary)"
       ${HFGET_STATIC_GCC_RUNTIME_DEFAULT})

# The shipped executable only: the unit tests are never copied to another machine.
function(hfget_link_portably target)
  if(HFGET_STATIC_GCC_RUNTIME)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()
