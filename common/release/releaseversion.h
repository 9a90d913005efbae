#pragma once

#include "common/result.h"

#include <QString>

#include <compare>

namespace cloop::release {

// A package's version as the project numbers it: MAJOR.MINOR.PATCH for a
// release, and for an edge build the number it leads to, "~git" and the
// first 12 hex digits of its commit (0.3.0~git0123456789ab). As in dpkg,
// a build sorts before the release of its number; two builds of the same
// number are not ordered (a commit says nothing of age).
class ReleaseVersion
{
public:
    static Result<ReleaseVersion> parse(const QString &text);

    bool isEdge() const { return !m_build.isEmpty(); }
    QString build() const { return m_build; } // 12 hex digits, or empty
    QString toString() const;

    friend std::partial_ordering operator<=>(const ReleaseVersion &a, const ReleaseVersion &b);
    friend bool operator==(const ReleaseVersion &, const ReleaseVersion &) = default;

private:
    int m_major = 0;
    int m_minor = 0;
    int m_patch = 0;
    QString m_build;
};

} // namespace cloop::release
