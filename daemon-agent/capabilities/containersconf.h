#pragma once

#include <QMap>
#include <QString>
#include <QStringList>
#include <QStringView>

namespace cloop::agent::containersconf {

// The OCI runtimes podman knows by name come from the [engine.runtimes]
// table of containers.conf(5): name = ["candidate path", ...]. `podman info`
// only shows the default one, so the agent reads the table itself.

// The table as written in one file's text. Reads the small TOML subset the
// table uses (quoted keys and strings, arrays over several lines, comments)
// and skips what it does not understand rather than failing.
QMap<QString, QStringList> parseRuntimes(QStringView toml);

// The files podman reads, in the order it reads them (a later file's entry
// replaces an earlier one): $CONTAINERS_CONF alone when set; otherwise
// /usr/share/containers/containers.conf, /etc/containers/containers.conf,
// /etc/containers/containers.conf.d/*.conf and, for a rootless user, the
// same under $XDG_CONFIG_HOME (or ~/.config).
QStringList defaultFiles(bool rootless);

// parseRuntimes() over `files`, merged; missing files are skipped.
QMap<QString, QStringList> readRuntimes(const QStringList &files);

} // namespace cloop::agent::containersconf
