#pragma once

#include <QJsonObject>
#include <QString>

namespace cloop::util {

// What a program says of its build with --version: enough for an operator
// to tell two machines' builds apart and to file a bug against the right
// commit and libraries.
struct VersionReport
{
    QString program; // "cloop-forward"
    QString version; // from project() in CMake
    QString commit; // the build's git commit ("-modified" when the tree had changes); "unknown"
                    // outside a checkout
    int protocol = 0; // the tunnel protocol it speaks
    QString qt; // the Qt it runs on, which may be newer than it was built with
    QString openssl;

    static VersionReport of(const QString &program);

    // "cloop-forward 0.1.0 (commit 1a2b3c4d5e6f, protocol 25; Qt 6.4.2, OpenSSL 3.0.17)"
    QString toText() const;
    QString shortCommit() const; // twelve digits, and "-modified" for a changed tree
    QJsonObject toJson() const;
};

} // namespace cloop::util
