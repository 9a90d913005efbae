#pragma once

#include "common/result.h"

#include <QByteArrayView>
#include <QLatin1StringView>
#include <QList>

namespace cloop::util {

// The entries of the list under `key` in the text of a JSON object, each as
// the span of text it takes, found in one validating pass that builds no
// tree. A listing of 10,000 records read as one QJsonDocument spent more
// time growing that document's storage than reading the records; each entry
// parsed on its own costs a third of it.
//
// The whole text is checked (syntax, UTF-8, nesting), not just the list: it
// must be one object, the key must appear at most once and hold a list of
// objects. An absent key is an empty list. The spans point into `text`.
Result<QList<QByteArrayView>> jsonListEntries(QByteArrayView text, QLatin1StringView key);

} // namespace cloop::util
