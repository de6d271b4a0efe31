# SPDX-License-Identifier: MIT
# The commit `hfget --version` names: `git describe` when the build is configured ("-dirty" for uncommitted
# changes), "unknown" outside a git checkout (a source tarball). A commit or checkout re-runs the configure step,
# so the name does not go stale in a developer's build directory.
find_package(Git QUIET)
set(HFGET_GIT_COMMIT "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE describe RESULT_VARIABLE failed
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT failed AND describe)
    set(HFGET_GIT_COMMIT "${describe}")
    # HEAD, and the branch file it points at: what changes on a commit or a checkout (a worktree's live elsewhere).
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --path-format=absolute --git-path HEAD
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE head_file
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(COMMAND ${GIT_EXECUTABLE} symbolic-ref -q HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE branch_ref OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(branch_ref)
      execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --path-format=absolute --git-path ${branch_ref}
                      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE branch_file
                      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
    foreach(watched IN ITEMS ${head_file} ${branch_file})
      if(EXISTS "${watched}")
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${watched}")
      endif()
    endforeach()
  endif()
endif()
