# cmake -DFUZZER=<binary> -DSCRATCH=<dir> -DCORPUS=<seed dir> [-DARGS=<list>] -P run_fuzzer.cmake
#
# Runs a libFuzzer binary on a read-only seed corpus: new inputs and crash
# artifacts go to SCRATCH, emptied first so runs do not accumulate. Fails
# when the fuzzer does (a crash, a leak, a timeout or a broken invariant).
foreach(var FUZZER SCRATCH CORPUS)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "run_fuzzer.cmake: ${var} is not set")
    endif()
endforeach()
if(NOT IS_DIRECTORY "${CORPUS}")
    message(FATAL_ERROR "run_fuzzer.cmake: seed corpus ${CORPUS} is missing")
endif()

file(REMOVE_RECURSE "${SCRATCH}")
file(MAKE_DIRECTORY "${SCRATCH}/new" "${SCRATCH}/artifacts")

execute_process(
    COMMAND "${FUZZER}" ${ARGS} "-artifact_prefix=${SCRATCH}/artifacts/"
            "${SCRATCH}/new" "${CORPUS}"
    RESULT_VARIABLE result)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "${FUZZER} failed (${result}); crash inputs, if any, are in "
                        "${SCRATCH}/artifacts/")
endif()
