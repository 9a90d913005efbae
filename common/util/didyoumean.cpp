#include "common/util/didyoumean.h"

#include <algorithm>
#include <vector>

namespace cloop::util {

namespace {

// Optimal string alignment distance: Levenshtein's edits plus the swap of
// two neighbouring letters, the commonest slip of a typing hand.
qsizetype editDistance(QStringView a, QStringView b)
{
    const qsizetype rows = a.size() + 1;
    const qsizetype columns = b.size() + 1;
    std::vector<qsizetype> cost(rows * columns);
    const auto at = [&](qsizetype i, qsizetype j) -> qsizetype & { return cost[i * columns + j]; };
    for (qsizetype i = 0; i < rows; ++i)
        at(i, 0) = i;
    for (qsizetype j = 0; j < columns; ++j)
        at(0, j) = j;
    for (qsizetype i = 1; i < rows; ++i) {
        for (qsizetype j = 1; j < columns; ++j) {
            const qsizetype changed = a[i - 1] == b[j - 1] ? 0 : 1;
            at(i, j) = std::min({ at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + changed });
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
        }
    }
    return at(rows - 1, columns - 1);
}

} // namespace

QString closestMatch(const QString &typed, const QStringList &candidates)
{
    if (typed.isEmpty())
        return {};
    const qsizetype allowed = typed.size() <= 4 ? 1 : 2;
    QString best;
    qsizetype bestDistance = allowed + 1;
    for (const QString &candidate : candidates) {
        const qsizetype distance = editDistance(typed.toLower(), candidate.toLower());
        if (distance < bestDistance) {
            best = candidate;
            bestDistance = distance;
        }
    }
    if (!best.isEmpty())
        return best;
    // "bind" for "bindi" is an edit away; "bin" for "bindings" is a start.
    QStringList starting;
    for (const QString &candidate : candidates) {
        if (candidate.startsWith(typed, Qt::CaseInsensitive))
            starting.append(candidate);
    }
    return starting.size() == 1 ? starting.constFirst() : QString();
}

QString didYouMean(const QString &typed, const QStringList &candidates)
{
    const QString match = closestMatch(typed, candidates);
    return match.isEmpty() ? QString() : QStringLiteral(" (did you mean \"%1\"?)").arg(match);
}

} // namespace cloop::util
