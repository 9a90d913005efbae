# ctest: the shared libraries each program really loads (ldd), against what
# it must not: the hub's server no USB (libudev) and no keyring, the
# daemons no SQL, no keyring and no widgets; and no production program
# reads the fixture-tree variables of the test builds.
#   cmake -DBINARY_DIR=build/bin -P check_shared_libraries.cmake
set(rules
    "cloop-hub|libudev|qt6keychain|libQt6Widgets|libQt6Gui"
    "cloop-forward|qt6keychain|libQt6Sql|libQt6Widgets|libQt6Gui"
    "cloop-agent|libudev|qt6keychain|libQt6Sql|libQt6Widgets|libQt6Gui"
)
set(failed FALSE)
foreach(rule IN LISTS rules)
    string(REPLACE "|" ";" parts "${rule}")
    list(POP_FRONT parts program)
    execute_process(COMMAND ldd "${BINARY_DIR}/${program}" OUTPUT_VARIABLE loaded RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
        message(SEND_ERROR "ldd ${program} failed")
        set(failed TRUE)
        continue()
    endif()
    foreach(forbidden IN LISTS parts)
        if(loaded MATCHES "${forbidden}")
            message(SEND_ERROR "${program} loads ${forbidden}")
            set(failed TRUE)
        endif()
    endforeach()
    message(STATUS "${program}: none of ${parts}")
endforeach()
# A production program's kernel is its machine's: only the *-usbstandin
# test builds may be pointed at fixture trees or carry a stand-in.
foreach(program cloop cloop-hub cloop-forward cloop-agent)
    file(STRINGS "${BINARY_DIR}/${program}" hooks REGEX "CLOOP_(SYSFS|DEV|PROC)_ROOT|CLOOP_USB_STANDIN")
    if(hooks)
        message(SEND_ERROR "${program} reads a test hook: ${hooks}")
        set(failed TRUE)
    endif()
endforeach()
file(STRINGS "${BINARY_DIR}/cloop-forward-usbstandin" hooks REGEX "CLOOP_SYSFS_ROOT")
if(NOT hooks)
    message(SEND_ERROR "the check cannot see hooks: cloop-forward-usbstandin has none either")
    set(failed TRUE)
endif()
if(failed)
    message(FATAL_ERROR "a program loads a library or reads a hook it must not")
endif()
