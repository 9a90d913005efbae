#include "common/util/versionreport.h"

#include "cloop/buildinfo.h"
#include "cloop/commit.h"
#include "common/protocol/protocolversion.h"

#include <openssl/crypto.h>

#include <QtGlobal>

namespace cloop::util {

using namespace Qt::StringLiterals;

VersionReport VersionReport::of(const QString &program)
{
    QString openssl = QString::fromLatin1(OpenSSL_version(OPENSSL_VERSION));
    // "OpenSSL 3.0.17 1 Jul 2025": the library's name is the field's.
    if (openssl.startsWith("OpenSSL "_L1))
        openssl = openssl.mid(8).section(u' ', 0, 0);
    return VersionReport { program, QString::fromLatin1(buildinfo::kVersion),
        QString::fromLatin1(buildinfo::kCommit), protocol::kVersion,
        QString::fromLatin1(qVersion()), openssl };
}

QString VersionReport::shortCommit() const
{
    // A full hash is 40 hex digits; what follows it ("-modified") stays.
    const qsizetype hashEnd = commit.indexOf(u'-') < 0 ? commit.size() : commit.indexOf(u'-');
    return hashEnd > 12 ? commit.left(12) + commit.mid(hashEnd) : commit;
}

QString VersionReport::toText() const
{
    return u"%1 %2 (commit %3, protocol %4; Qt %5, OpenSSL %6)"_s.arg(
        program, version, commit.left(12), QString::number(protocol), qt, openssl);
}

QJsonObject VersionReport::toJson() const
{
    return QJsonObject { { "program"_L1, program }, { "version"_L1, version },
        { "commit"_L1, commit }, { "protocol"_L1, protocol }, { "qt"_L1, qt },
        { "openssl"_L1, openssl } };
}

} // namespace cloop::util
