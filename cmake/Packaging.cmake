# Debian packages, one per program: `cpack -G DEB` in a build configured
# with CMAKE_INSTALL_PREFIX=/usr (scripts/package does both, and lintian).
# Dependencies come from the linked libraries (dpkg-shlibdeps) plus what a
# program loads or runs without linking it, named below.

set(CLOOP_MAINTAINER "cloop developers <cloop-developers@lists.cloop-project.org>"
    CACHE STRING "The Maintainer of the Debian packages")
set(CLOOP_DEB_RELEASE 1 CACHE STRING "The Debian revision of the packages")
set(CLOOP_DEB_VERSION "${CLOOP_FULL_VERSION}-${CLOOP_DEB_RELEASE}")

set(debian_sources ${PROJECT_SOURCE_DIR}/resources/debian)
set(debian_out ${PROJECT_BINARY_DIR}/debian)

execute_process(
    COMMAND git -C ${PROJECT_SOURCE_DIR} rev-parse --short=12 HEAD
    OUTPUT_VARIABLE CLOOP_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(CLOOP_COMMIT STREQUAL "")
    set(CLOOP_COMMIT "unknown")
endif()
# SOURCE_DATE_EPOCH, when set, makes the date (and the packages) reproducible.
string(TIMESTAMP CLOOP_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)

# cloop_debian_package(COMPONENT PACKAGE SUMMARY DESCRIPTION
#     [UNIT unit] [START_ON_INSTALL] [UPGRADE_HELPER] [USERS "name home gecos;…"]
#     [KEPT text]
#     [MANUALS page.section…] [DEPENDS …] [RECOMMENDS …])
function(cloop_debian_package component package summary description)
    cmake_parse_arguments(PARSE_ARGV 4 arg "START_ON_INSTALL;UPGRADE_HELPER" "UNIT;KEPT"
        "USERS;MANUALS;DEPENDS;RECOMMENDS")
    string(TOUPPER ${component} upper)
    set(CPACK_DEBIAN_${upper}_PACKAGE_NAME ${package} PARENT_SCOPE)
    set(CPACK_DEBIAN_${upper}_DESCRIPTION "${summary}\n${description}" PARENT_SCOPE)
    set(CPACK_COMPONENT_${upper}_DESCRIPTION "${summary}\n${description}" PARENT_SCOPE)
    set(CPACK_DEBIAN_${upper}_FILE_NAME "${package}_${CLOOP_DEB_VERSION}_amd64.deb" PARENT_SCOPE)
    list(JOIN arg_DEPENDS ", " depends)
    list(JOIN arg_RECOMMENDS ", " recommends)
    set(CPACK_DEBIAN_${upper}_PACKAGE_DEPENDS "${depends}" PARENT_SCOPE)
    set(CPACK_DEBIAN_${upper}_PACKAGE_RECOMMENDS "${recommends}" PARENT_SCOPE)

    set(out ${debian_out}/${package})
    set(CLOOP_PACKAGE ${package})
    configure_file(${debian_sources}/copyright.in ${out}/copyright @ONLY)
    configure_file(${debian_sources}/changelog.in ${out}/changelog.Debian @ONLY)
    execute_process(COMMAND gzip -9nf ${out}/changelog.Debian)
    install(FILES ${out}/copyright ${out}/changelog.Debian.gz
        DESTINATION share/doc/${package} COMPONENT ${component})
    # The packages are the project's own, not Debian's: their first upload
    # closes no Debian bug.
    file(WRITE ${out}/lintian-overrides
        "${package}: initial-upload-closes-no-bugs\n")
    install(FILES ${out}/lintian-overrides DESTINATION share/lintian/overrides
        RENAME ${package} COMPONENT ${component})

    foreach(manual IN LISTS arg_MANUALS)
        string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${manual})
        configure_file(${PROJECT_SOURCE_DIR}/resources/man/${manual} ${out}/${manual} @ONLY)
        execute_process(COMMAND gzip -9nf ${out}/${manual})
        install(FILES ${out}/${manual}.gz DESTINATION share/man/man${section}
            COMPONENT ${component})
    endforeach()

    if(arg_UNIT)
        set(PACKAGE ${package})
        set(UNIT ${arg_UNIT})
        # The root helper that applies the hub's upgrade requests: a path
        # unit its install command enables, and the service it starts.
        set(HELPER_UNIT "")
        if(arg_UPGRADE_HELPER)
            string(REPLACE ".service" "-upgrade" helper ${arg_UNIT})
            set(HELPER_UNIT ${helper}.path)
            install(FILES ${PROJECT_SOURCE_DIR}/resources/systemd/${helper}.path
                          ${PROJECT_SOURCE_DIR}/resources/systemd/${helper}.service
                DESTINATION /lib/systemd/system COMPONENT ${component})
        endif()
        set(START_ON_INSTALL no)
        if(arg_START_ON_INSTALL)
            set(START_ON_INSTALL yes)
        endif()
        set(KEPT "${arg_KEPT}")
        # The system users it runs as: made once and never removed, since
        # files they own (a hub's database, a workload's output) outlive it.
        set(MAKE_USERS "")
        foreach(user IN LISTS arg_USERS)
            separate_arguments(fields UNIX_COMMAND "${user}")
            list(GET fields 0 name)
            list(GET fields 1 home)
            list(GET fields 2 gecos)
            string(APPEND MAKE_USERS
                "    if ! getent passwd ${name} >/dev/null; then\n"
                "        adduser --system --group --no-create-home --home ${home} \\\n"
                "            --shell /usr/sbin/nologin --gecos \"${gecos}\" --quiet ${name}\n"
                "    fi\n")
        endforeach()
        set(scripts)
        foreach(script postinst prerm postrm)
            configure_file(${debian_sources}/${script}.in ${out}/${script} @ONLY
                FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                                 GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
            list(APPEND scripts ${out}/${script})
        endforeach()
        set(CPACK_DEBIAN_${upper}_PACKAGE_CONTROL_EXTRA "${scripts}" PARENT_SCOPE)
        install(FILES ${PROJECT_SOURCE_DIR}/resources/systemd/${arg_UNIT}
            DESTINATION /lib/systemd/system COMPONENT ${component})
    endif()
endfunction()

cloop_debian_package(hub cloop-hub
    "cloop hub: lends on-prem devices to projects' sandboxed runs"
    "The hub of cloop: it keeps the forwarders and executor agents that dial\nit, decides who may bind which device to which project, and relays a\nbound device's traffic between its forwarder and the agent running the\nproject's sandbox. It runs as the system user cloop, from the unit\ncloop-hub.service, with its data in /var/lib/cloop."
    MANUALS cloop-hub.8
    UNIT cloop-hub.service START_ON_INSTALL
    USERS "cloop /var/lib/cloop \"cloop hub\""
    KEPT "/var/lib/cloop (the database, TLS identity and run logs)"
    DEPENDS adduser libqt6sql6-sqlite
    RECOMMENDS libqt6sql6-psql)
cloop_debian_package(forward cloop-forward
    "cloop forwarder: carries one USB device or network segment to a hub"
    "The forwarder of cloop runs on the machine a device is plugged into. It\ndials the hub, pinned to its key, and carries the device it was enrolled\nfor: a USB device through the kernel's usbip-host, or a layer-2 segment\nthrough a packet socket. `cloop forward install` enrolls it as the unit\ncloop-forward.service."
    MANUALS cloop-forward.8
    UNIT cloop-forward.service UPGRADE_HELPER
    KEPT "/etc/cloop (the credential)"
    RECOMMENDS kmod)
cloop_debian_package(agent cloop-agent
    "cloop executor agent: runs projects' workloads in sandboxes"
    "The executor agent of cloop runs the workloads a hub dispatches to this\nmachine in rootful podman sandboxes, as the user cloop-run, and attaches\nthe devices bound to the run's project: a TAP on the segment, or a USB\ndevice through vhci_hcd. `cloop executor agent install` enrolls it as\nthe unit cloop-agent.service."
    MANUALS cloop-agent.8
    UNIT cloop-agent.service UPGRADE_HELPER
    USERS "cloop-run /nonexistent \"cloop workloads\""
    KEPT "/etc/cloop (the credential) and /var/lib/cloop-agent (runs' folders)"
    DEPENDS adduser
    RECOMMENDS podman runc nftables busybox-static kmod)
cloop_debian_package(dashboard cloop-dashboard
    "cloop dashboard: bind, unbind and test a hub's devices"
    "The desktop dashboard of cloop: administrators sign in to a hub with an\nAPI token and bind, unbind and test its forwarders, decide binding\nrequests, and follow runs and the audit log."
    MANUALS cloop-dashboard.1
    DEPENDS qt6-qpa-plugins)
cloop_debian_package(cli cloop
    "command line of the cloop hub, forwarders and executor agents"
    "The umbrella command of cloop: enrollment, bindings, approvals, projects,\nusers, tokens and runs against a hub, and the forwarder and executor\nagent themselves (cloop forward, cloop executor agent)."
    MANUALS cloop.1
    DEPENDS libqt6sql6-sqlite)

# The release keys devices verify upgrades with (scripts/release --trust
# DIR): the public keys in CLOOP_RELEASE_KEYS, in a package of their own
# that the forwarder and the agent depend on, as Debian ships its archive
# keys. Without it the packages carry no key and devices install no upgrade.
set(CLOOP_RELEASE_KEYS "" CACHE PATH "A folder of the release keys' public halves (*.pem)")
set(cloop_components hub forward agent dashboard cli)
if(CLOOP_RELEASE_KEYS)
    file(GLOB release_keys ${CLOOP_RELEASE_KEYS}/*.pem)
    if(NOT release_keys)
        message(FATAL_ERROR "CLOOP_RELEASE_KEYS (${CLOOP_RELEASE_KEYS}) holds no *.pem")
    endif()
    cloop_debian_package(keys cloop-release-keys
        "cloop release keys: what devices verify upgrades with"
        "The public halves of the keys cloop's releases are signed with. A\nforwarder or an executor agent installs no package whose signature\nnone of them verifies.")
    set(CPACK_DEBIAN_KEYS_PACKAGE_ARCHITECTURE all)
    set(CPACK_DEBIAN_KEYS_FILE_NAME "cloop-release-keys_${CLOOP_DEB_VERSION}_all.deb")
    set(CPACK_DEBIAN_KEYS_PACKAGE_SHLIBDEPS OFF)
    install(FILES ${release_keys} DESTINATION share/cloop/release-keys COMPONENT keys)
    foreach(device forward agent)
        string(TOUPPER ${device} upper)
        if(CPACK_DEBIAN_${upper}_PACKAGE_DEPENDS)
            string(APPEND CPACK_DEBIAN_${upper}_PACKAGE_DEPENDS ", ")
        endif()
        # Any version: a device upgrades its daemon's package alone, and the
        # keys change only when a key is added or retired.
        string(APPEND CPACK_DEBIAN_${upper}_PACKAGE_DEPENDS "cloop-release-keys")
    endforeach()
    list(APPEND cloop_components keys)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/cloop-dashboard.desktop
    DESTINATION share/applications COMPONENT dashboard)
install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/cloop-dashboard.svg
    DESTINATION share/icons/hicolor/scalable/apps COMPONENT dashboard)

set(CPACK_GENERATOR DEB)
# Each package's Description starts with its own summary: CPack puts a
# project-wide summary above it unless that is its default.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_PACKAGE_NAME cloop)
set(CPACK_PACKAGE_VERSION ${CLOOP_FULL_VERSION})
set(CPACK_PACKAGE_CONTACT "${CLOOP_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
# CLOOP_PACKAGE_COMPONENTS: only these packages (agent;keys), from a build
# of only their programs.
set(CLOOP_PACKAGE_COMPONENTS "" CACHE STRING "The components to package (default: all)")
if(CLOOP_PACKAGE_COMPONENTS)
    set(cloop_components ${CLOOP_PACKAGE_COMPONENTS})
endif()
set(CPACK_COMPONENTS_ALL ${cloop_components})
set(CPACK_DEBIAN_PACKAGE_VERSION ${CLOOP_FULL_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE ${CLOOP_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CLOOP_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
