# Everything a target of this project needs to compile the same way: one
# INTERFACE target instead of directory-scope flags.
add_library(cloop_options INTERFACE)
target_compile_features(cloop_options INTERFACE cxx_std_20)
set(CMAKE_CXX_EXTENSIONS OFF)
target_compile_options(cloop_options INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough
    $<$<CXX_COMPILER_ID:GNU>:-Wduplicated-cond -Wlogical-op>)
target_compile_definitions(cloop_options INTERFACE
    QT_NO_CAST_FROM_ASCII
    QT_NO_CAST_TO_ASCII
    QT_NO_URL_CAST_FROM_STRING
    QT_NO_NARROWING_CONVERSIONS_IN_CONNECT
    QT_NO_FOREACH
    QT_NO_KEYWORDS
    QT_STRICT_ITERATORS
    # Qt 6.4 reads this one (QT_DISABLE_DEPRECATED_UP_TO came with 6.5).
    QT_DISABLE_DEPRECATED_BEFORE=0x060400)
# Code writes #include "common/..." from the repository root.
target_include_directories(cloop_options INTERFACE
    ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)

# The version every program reports comes from the build, never a constant
# in the sources; generated into the build tree. A release is numbered by
# whoever builds it (scripts/release --version); an edge build carries the
# first 12 digits of its commit after the number it leads to
# (0.3.0~git0123456789ab), which sorts before that release.
set(CLOOP_VERSION "${PROJECT_VERSION}" CACHE STRING "MAJOR.MINOR.PATCH of the programs and packages")
set(CLOOP_CHANNEL stable CACHE STRING "stable (a release) or edge (a build of a commit)")
set_property(CACHE CLOOP_CHANNEL PROPERTY STRINGS stable edge)
if(NOT CLOOP_VERSION MATCHES "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$")
    message(FATAL_ERROR "CLOOP_VERSION is MAJOR.MINOR.PATCH, not \"${CLOOP_VERSION}\"")
endif()
if(CLOOP_CHANNEL STREQUAL "edge")
    execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} rev-parse HEAD
        OUTPUT_VARIABLE edge_commit OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE edge_status)
    if(NOT edge_status EQUAL 0 OR NOT edge_commit MATCHES "^[0-9a-f]+$")
        message(FATAL_ERROR "an edge build needs the git commit of its checkout")
    endif()
    string(SUBSTRING ${edge_commit} 0 12 edge_commit)
    set(CLOOP_FULL_VERSION "${CLOOP_VERSION}~git${edge_commit}")
elseif(CLOOP_CHANNEL STREQUAL "stable")
    set(CLOOP_FULL_VERSION "${CLOOP_VERSION}")
else()
    message(FATAL_ERROR "CLOOP_CHANNEL is stable or edge, not \"${CLOOP_CHANNEL}\"")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/buildinfo.h.in
               ${PROJECT_BINARY_DIR}/generated/cloop/buildinfo.h @ONLY)
# The commit is read at every build, not at configure: a build after a new
# commit names the new one.
add_custom_target(cloop_commit
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
            -DOUTPUT=${PROJECT_BINARY_DIR}/generated/cloop/commit.h
            -P ${PROJECT_SOURCE_DIR}/cmake/WriteCommit.cmake
    BYPRODUCTS ${PROJECT_BINARY_DIR}/generated/cloop/commit.h
    COMMENT "Reading the git commit"
    VERBATIM)

# CI builds with every warning an error (.ci/run sets CLOOP_WERROR).
option(CLOOP_WERROR "Treat compiler warnings as errors" OFF)
if(CLOOP_WERROR)
    target_compile_options(cloop_options INTERFACE -Werror)
endif()

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
