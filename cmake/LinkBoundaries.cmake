# Which library may link which is a rule of the build, not of discipline:
# cloop_forbid_links(TARGET FORBIDDEN...) fails the configuration when
# TARGET reaches any FORBIDDEN target through its link dependencies, direct
# or transitive, and names the path that does.

function(_cloop_link_children target out)
    set(children "")
    if(TARGET ${target})
        get_target_property(type ${target} TYPE)
        set(properties INTERFACE_LINK_LIBRARIES)
        if(NOT type STREQUAL "INTERFACE_LIBRARY" OR CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
            list(APPEND properties LINK_LIBRARIES)
        endif()
        foreach(property IN LISTS properties)
            get_target_property(libraries ${target} ${property})
            foreach(library IN LISTS libraries)
                string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" library "${library}")
                if(library AND NOT library MATCHES "NOTFOUND$" AND NOT library MATCHES "\\$<")
                    list(APPEND children ${library})
                endif()
            endforeach()
        endforeach()
    endif()
    set(${out} ${children} PARENT_SCOPE)
endfunction()

function(cloop_forbid_links target)
    # Breadth first, remembering how each target was reached.
    set(seen ${target})
    set(queue ${target})
    set(path_${target} ${target})
    while(queue)
        list(POP_FRONT queue current)
        _cloop_link_children(${current} children)
        foreach(child IN LISTS children)
            if(NOT child IN_LIST seen)
                list(APPEND seen ${child})
                list(APPEND queue ${child})
                set(path_${child} "${path_${current}} -> ${child}")
            endif()
        endforeach()
    endwhile()
    foreach(forbidden IN LISTS ARGN)
        if(forbidden IN_LIST seen)
            message(FATAL_ERROR "${target} must not link ${forbidden}, but does: ${path_${forbidden}}")
        endif()
    endforeach()
endfunction()

# The rules of docs/architecture.md.
function(cloop_check_link_boundaries)
    set(programs cloop_cli cloop_hub_core cloop_hub_executor cloop_hub_serve cloop_forward_core
        cloop_agent_core cloop_dashboard_core cloop_dashboard_ui)
    set(gui Qt6::Gui Qt6::Widgets)
    cloop_forbid_links(cloop_common ${programs} cloop_hub_edge ${gui} Qt6::Sql)
    cloop_forbid_links(cloop_hub_edge ${programs} ${gui} Qt6::Sql)
    cloop_forbid_links(cloop_hub_core cloop_agent_core cloop_forward_core cloop_hub_executor
        cloop_cli qt6keychain PkgConfig::LIBUDEV ${gui})
    cloop_forbid_links(cloop-hub cloop_forward_core cloop_cli qt6keychain PkgConfig::LIBUDEV ${gui})
    cloop_forbid_links(cloop-forward cloop_hub_core cloop_hub_edge cloop_agent_core cloop_cli
        qt6keychain Qt6::Sql ${gui})
    cloop_forbid_links(cloop-agent cloop_hub_core cloop_hub_edge cloop_forward_core cloop_cli
        qt6keychain PkgConfig::LIBUDEV Qt6::Sql ${gui})
    cloop_forbid_links(cloop-dashboard cloop_hub_core cloop_hub_edge cloop_forward_core
        cloop_agent_core cloop_cli PkgConfig::LIBUDEV Qt6::Sql)
endfunction()
