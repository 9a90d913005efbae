#pragma once

// Reading the Prometheus text a hub serves on its metrics address, the
// way a scraper would: plain HTTP, then one sample by name and labels.

#include "support/pinnedhttp.h"

#include <QMap>
#include <QString>
#include <QUrl>

#include <optional>

namespace cloop::testing {

// GET `url` in plain HTTP (a method other than GET when given).
HttpResult plainHttp(const QUrl &url, const QByteArray &method = "GET", int timeoutMs = 10000);

// The value of the sample `name{labels}` (all of `labels`, in any order,
// other labels allowed), none when no line has it.
std::optional<double> metricValue(
    const QByteArray &exposition, const QString &name, const QMap<QString, QString> &labels = {});

// The type a "# TYPE name type" line gives, empty when none does.
QString metricType(const QByteArray &exposition, const QString &name);

} // namespace cloop::testing
