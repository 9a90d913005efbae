# Writes OUTPUT, a header naming the checkout's git commit, at every build,
# and touches it only when the commit changed: a commit rebuilds the few
# files that include it, a build with no new commit rebuilds nothing.
# CLOOP_COMMIT in the environment wins (a build from a source tarball).
if(DEFINED ENV{CLOOP_COMMIT})
    set(commit "$ENV{CLOOP_COMMIT}")
else()
    execute_process(
        COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD
        OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
        RESULT_VARIABLE failed ERROR_QUIET)
    if(failed OR commit STREQUAL "")
        set(commit "unknown")
    else()
        execute_process(
            COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
            OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        if(NOT changes STREQUAL "")
            string(APPEND commit "-modified")
        endif()
    endif()
endif()
set(text "#pragma once\n\nnamespace cloop::buildinfo {\ninline constexpr char kCommit[] = \"${commit}\";\n}\n")
if(EXISTS "${OUTPUT}")
    file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
    file(WRITE "${OUTPUT}" "${text}")
endif()
