# SPDX-License-Identifier: MIT
# The .deb (CPack's DEB generator; scripts/package builds it from a Release build). Its Depends name each library
# package by the names Debian 12 and Ubuntu 24.04 use: Ubuntu 24.04 renamed libcurl4 and libssl3 for the 64-bit
# time_t transition (libcurl4t64, libssl3t64) but not liblz4-1, whose ABI has no time_t. The version floors are
# what hfget needs at run time: libcurl 7.85 (CURLOPT_PROTOCOLS_STR), OpenSSL 3, lz4 1.9, glibc 2.36 (the highest
# GLIBC_ symbol version test_install.py allows). Ubuntu 22.04's libcurl4 is 7.81, so the package refuses it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hfget)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "hfget maintainers <hfget@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Fetch a model repository from the Hugging Face Hub and prove it arrived whole")
set(CPACK_PACKAGE_DESCRIPTION
    "hfget downloads Hugging Face Hub repositories into the same cache huggingface_hub uses, with many connections,
resumes, and verifies every file against the Hub's hashes.")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
execute_process(COMMAND dpkg --print-architecture OUTPUT_VARIABLE deb_architecture OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(deb_architecture)
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${deb_architecture})
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6 (>= 2.36), libcurl4 (>= 7.85.0) | libcurl4t64 (>= 7.85.0), libssl3 (>= 3.0.0) | libssl3t64 (>= 3.0.0), liblz4-1 (>= 1.9.0)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ca-certificates")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, man-db")
set(CPACK_PACKAGE_INSTALL_DIRECTORY hfget)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
