# SPDX-License-Identifier: MIT
# Where `cmake --install` (and the .deb, which is the same install) puts hfget: the binary, hfget(1), the bash
# completion and the docs, in the places distributions use (GNUInstallDirs), under any CMAKE_INSTALL_PREFIX
# (`--prefix ~/.local` needs no root). `cmake --install BUILD --strip` strips the binary; docs/install.md.
include(GNUInstallDirs)

# cpack (and make install) would first build every target, tests included: in the middle of a ctest run
# (test_install packs the build directory) that relinks the unit-test binary under the other tests' feet. Install
# what is built; scripts/package builds before it packs.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# hfget(1) is made by the binary itself from its command tree (src/cli/man_page.cpp), so it cannot drift from
# --help. The sanitizer builds make it too: it is one short run.
set(HFGET_MAN_PAGE ${PROJECT_BINARY_DIR}/hfget.1)
add_custom_command(OUTPUT ${HFGET_MAN_PAGE}
                   COMMAND hfget __man --output ${HFGET_MAN_PAGE}
                   DEPENDS hfget
                   COMMENT "Generating hfget.1 from hfget's --help" VERBATIM)
add_custom_target(hfget_man ALL DEPENDS ${HFGET_MAN_PAGE})

install(TARGETS hfget RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${HFGET_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# bash-completion loads completions/NAME on demand from every XDG_DATA_DIRS entry, ~/.local/share included.
install(FILES share/completion/hfget.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME hfget)
install(FILES README.md LICENSE docs/install.md docs/cli.md docs/exit-codes.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
