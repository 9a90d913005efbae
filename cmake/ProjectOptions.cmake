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

# The version every program reports comes from project(), never a constant
# in the sources; generated into the build tree.
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
