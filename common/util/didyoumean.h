#pragma once

#include <QString>
#include <QStringList>

namespace cloop::util {

// The candidate a person most likely meant by `typed` ("lst" → "list",
// "--jsn" → "--json"), or empty when none is close: within one edit for
// short words, two for longer ones (an edit being a letter added, dropped,
// changed, or two neighbours swapped), or `typed` as the start of exactly
// one candidate. Ties go to the earlier candidate.
QString closestMatch(const QString &typed, const QStringList &candidates);

// " (did you mean \"list\"?)", or empty: the tail of an error message.
QString didYouMean(const QString &typed, const QStringList &candidates);

} // namespace cloop::util
