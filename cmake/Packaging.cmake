# Install rules and the Debian package (docs/packaging.md).
#
#   cmake --build build --target package     # build/waitpath_VERSION_ARCH.deb (cpack -G DEB)
#   apt-get install ./build/waitpath_*.deb   # or dpkg -i; pulls the runtime libraries
#
# Layout (PREFIX = /usr in the package, CMAKE_INSTALL_PREFIX for `cmake --install`):
#   PREFIX/bin/waitpath, waitpath-gen, waitpath-replay   the command and what `waitpath demo` runs
#   PREFIX/share/waitpath/demo.toml, replay-hosts.sh     the demo's files (tools/demo/demo.cc
#                                                        looks for them in ../share/waitpath)
#   PREFIX/share/waitpath/timeline_view/                the offline timeline viewer (docs/timeline.md)
#   PREFIX/share/waitpath/configs/                       configs/: TOML, systemd, Prometheus,
#                                                        Grafana, LTTng session script
#   PREFIX/share/man/man1/waitpath*.1.gz                 from each command's --help (help2man)
#   PREFIX/share/bash-completion/completions/            packaging/bash-completion/
#   PREFIX/lib/systemd/system/waitpath.service           configs/systemd/waitpath.service
#   /etc/waitpath/waitpath.toml                          configs/waitpath.toml (a conffile)
#   PREFIX/share/doc/waitpath/                           README.md, docs/*.md
include(GNUInstallDirs)

set(WAITPATH_PACKAGE_DIR ${PROJECT_SOURCE_DIR}/packaging)

# --- binaries -------------------------------------------------------------------------------
install(TARGETS waitpath waitpath-gen RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET waitpath-replay)
  install(TARGETS waitpath-replay RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
else()
  message(WARNING "packaging: waitpath-replay is not built (liblttng-ust-dev missing): "
                  "the package's `waitpath demo` will not run")
endif()

# --- the demo's files, configs, docs ----------------------------------------------------------
set(WAITPATH_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/waitpath)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/replay/replay-hosts.sh
        DESTINATION ${WAITPATH_SHARE_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/tools/demo/demo.toml DESTINATION ${WAITPATH_SHARE_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/tools/timeline_view/timeline.html
        DESTINATION ${WAITPATH_SHARE_DIR}/timeline_view)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/timeline_view/view.sh
        DESTINATION ${WAITPATH_SHARE_DIR}/timeline_view)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${WAITPATH_SHARE_DIR}/configs
        USE_SOURCE_PERMISSIONS)
install(FILES ${PROJECT_SOURCE_DIR}/configs/systemd/waitpath.service
        DESTINATION lib/systemd/system)
# The service's configuration: an absolute path, so /etc/waitpath whatever the prefix (listed as
# a conffile in the package: an edited one survives upgrades).
install(FILES ${PROJECT_SOURCE_DIR}/configs/waitpath.toml DESTINATION /etc/waitpath)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")
# bash-completion loads a command's completion from a file of its name: one file, three names.
foreach(name waitpath waitpath-gen waitpath-replay)
  install(FILES ${WAITPATH_PACKAGE_DIR}/bash-completion/waitpath
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${name})
endforeach()

# --- man pages, from each command's --help ------------------------------------------------------
# One page per command and subcommand (waitpath(1), waitpath-analyze(1), ...), built with the
# binaries; packaging/man/NAME.h2m adds the sections --help does not have. Without help2man
# (apt-get install help2man) the package has no man pages and a warning says so.
find_program(HELP2MAN help2man)
if(HELP2MAN)
  # page name | how to run it (a subcommand through a wrapper named as the page) | NAME line
  set(WAITPATH_MAN_PAGES
      "waitpath|waitpath|why do programs wait? active-path analysis of Linux kernel traces"
      "waitpath-stats|waitpath stats|read traces end to end and report what they hold"
      "waitpath-analyze|waitpath analyze|the active path of every watched task in recorded traces"
      "waitpath-sync|waitpath sync|clock transforms between hosts from the TCP packets they exchanged"
      "waitpath-live|waitpath live|follow an lttng-relayd's live sessions, serve Prometheus metrics"
      "waitpath-tail|waitpath tail|print each resolved wait of watched tasks as it resolves"
      "waitpath-demo|waitpath demo|live demo: a generated three-host system through real LTTng daemons"
      "waitpath-gen|waitpath-gen|synthetic multi-host LTTng kernel traces with their true answer")
  if(TARGET waitpath-replay)
    list(APPEND WAITPATH_MAN_PAGES
         "waitpath-replay|waitpath-replay|re-emit a recorded kernel trace as LTTng-UST events")
  endif()
  set(man_dir ${PROJECT_BINARY_DIR}/man)
  set(man_outputs)
  foreach(entry IN LISTS WAITPATH_MAN_PAGES)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 page)
    list(GET fields 1 run)
    list(GET fields 2 what)
    separate_arguments(run_args UNIX_COMMAND "${run}")
    list(GET run_args 0 tool)
    list(REMOVE_AT run_args 0)
    string(JOIN " " sub ${run_args})
    # help2man names the page after the program it runs: a wrapper script of the page's name.
    file(GENERATE OUTPUT ${man_dir}/bin/${page}
         CONTENT "#!/bin/sh\nexec \"$<TARGET_FILE:${tool}>\" ${sub} \"$@\"\n"
         FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                          WORLD_READ WORLD_EXECUTE)
    set(include_args)
    set(page_deps ${tool} ${WAITPATH_PACKAGE_DIR}/man/common.h2m)
    if(EXISTS ${WAITPATH_PACKAGE_DIR}/man/${page}.h2m)
      set(include_args --include=${WAITPATH_PACKAGE_DIR}/man/${page}.h2m)
      list(APPEND page_deps ${WAITPATH_PACKAGE_DIR}/man/${page}.h2m)
    endif()
    # waitpath and each of its commands share one exit status (README, "Exit status").
    if(tool STREQUAL "waitpath")
      list(APPEND include_args --include=${WAITPATH_PACKAGE_DIR}/man/exit-status.h2m)
      list(APPEND page_deps ${WAITPATH_PACKAGE_DIR}/man/exit-status.h2m)
    endif()
    add_custom_command(
      OUTPUT ${man_dir}/${page}.1.gz
      COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1
              --version-string=${PROJECT_VERSION} --name=${what}
              --manual=waitpath --source=waitpath-${PROJECT_VERSION} ${include_args}
              --include=${WAITPATH_PACKAGE_DIR}/man/common.h2m
              --output=${man_dir}/${page}.1 ${man_dir}/bin/${page}
      COMMAND gzip -9nf ${man_dir}/${page}.1
      DEPENDS ${page_deps}
      COMMENT "Man page ${page}(1)"
      VERBATIM)
    list(APPEND man_outputs ${man_dir}/${page}.1.gz)
  endforeach()
  add_custom_target(man ALL DEPENDS ${man_outputs})
  install(FILES ${man_outputs} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(WARNING "packaging: help2man not found (apt-get install help2man): no man pages")
endif()

# --- the .deb ---------------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME waitpath)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "waitpath developers <waitpath@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "why do programs wait? active-path analysis of kernel traces")
set(CPACK_PACKAGE_DESCRIPTION
    "waitpath reads Linux kernel traces (LTTng live through lttng-relayd, recorded CTF, perf\n"
    "traces converted to CTF), rebuilds who woke whom and resolves every wait of a watched\n"
    "task into its active path: its own CPU time, CPU contention, timers, disks, the network\n"
    "and the threads on this or other hosts it depended on. It serves Prometheus metrics,\n"
    "a hardened systemd unit runs `waitpath live` (/etc/waitpath/waitpath.toml).")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: computed by dpkg-shlibdeps from the binaries' libraries (libbabeltrace2, RE2, {fmt},
# prometheus-cpp, civetweb, lttng-ust, libstdc++...). babeltrace2's CTF plugins, loaded at run
# time, are in libbabeltrace2-0 with the library itself.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# `waitpath live` and `waitpath demo` talk to LTTng's daemons.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "lttng-tools")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, babeltrace2, linux-perf")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${WAITPATH_PACKAGE_DIR}/deb/conffiles ${WAITPATH_PACKAGE_DIR}/deb/postinst ${WAITPATH_PACKAGE_DIR}/deb/prerm
    ${WAITPATH_PACKAGE_DIR}/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
