// Integration: `cloop release keygen|sign|verify` on real Debian packages
// built here with dpkg-deb, as whoever makes releases and a device that
// checks one do it, and `cloop hub release add|list` on a running hub.
// Every refusal leaves nothing written.

#include "support/releasepackages.h"
#include "support/testrig.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop::testing;
using namespace Qt::StringLiterals;

class TestReleaseCommands final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aSignedPackageVerifies();
    void aChangedPackageIsRefused();
    void aStrangersKeyIsRefused();
    void anEdgeBuildMustNameItsCommit();
    void nothingIsReplaced();
    void badInputIsRefused();
    void theHubOffersVerifiedPackagesOnly();

private:
    CliResult cloop(const QStringList &arguments);
    // A package dpkg-deb builds from a control of that name and version.
    QString makePackage(const QString &name, const QString &version, const QByteArray &payload);

    QTemporaryDir m_dir;
    QString m_private;
    QString m_keys;
    const QString m_commit = u"6e750e98150523914a360f8569bf9154cd9cd84c"_s;
};

CliResult TestReleaseCommands::cloop(const QStringList &arguments)
{
    return runProgram(binaryPath(u"cloop"_s), QStringList { u"release"_s } + arguments,
        childEnvironment(m_dir.path()));
}

QString TestReleaseCommands::makePackage(
    const QString &name, const QString &version, const QByteArray &payload)
{
    return makeDebianPackage(m_dir.path(), name, version, payload);
}

void TestReleaseCommands::initTestCase()
{
    if (QStandardPaths::findExecutable(u"dpkg-deb"_s).isEmpty())
        QSKIP("dpkg-deb is not installed (scripts/install-deps installs dpkg-dev)");
    QVERIFY(m_dir.isValid());
    m_private = m_dir.filePath(u"release.pem"_s);
    m_keys = m_dir.filePath(u"keys"_s);
    QVERIFY(QDir().mkpath(m_keys));
    const CliResult made = cloop(
        { u"keygen"_s, u"--private"_s, m_private, u"--public"_s, m_keys + u"/release.pem"_s });
    CLOOP_COMPARE_EXIT(made, 0);
    QVERIFY2(made.stdoutText().contains(u"ed25519:"_s), qPrintable(made.describe()));
    QCOMPARE(QFile(m_private).permissions() & (QFile::ReadOther | QFile::ReadGroup),
        QFileDevice::Permissions());
}

void TestReleaseCommands::aSignedPackageVerifies()
{
    const QString deb = makePackage(u"cloop-agent"_s, u"0.2.0-1"_s, "release payload");
    QVERIFY(!deb.isEmpty());
    const CliResult signedIt = cloop({ u"sign"_s, deb, u"--key"_s, m_private, u"--channel"_s,
        u"stable"_s, u"--commit"_s, m_commit });
    CLOOP_COMPARE_EXIT(signedIt, 0);
    QVERIFY(QFile::exists(deb + u".sig"_s));
    const CliResult verified = cloop({ u"verify"_s, deb, u"--keys"_s, m_keys });
    CLOOP_COMPARE_EXIT(verified, 0);
    QVERIFY2(verified.stdoutText().contains(
                 u"verified: cloop-agent 0.2.0 (stable, commit 6e750e981505)"_s),
        qPrintable(verified.describe()));
}

void TestReleaseCommands::aChangedPackageIsRefused()
{
    const QString deb = makePackage(u"cloop-forward"_s, u"0.2.0-1"_s, "forward payload");
    CLOOP_COMPARE_EXIT(cloop({ u"sign"_s, deb, u"--key"_s, m_private, u"--channel"_s, u"stable"_s,
                           u"--commit"_s, m_commit }),
        0);
    // Another package of the same name and version, given the signature.
    const QString other = makePackage(u"cloop-forward"_s, u"0.2.0-2"_s, "forward payloaD");
    const CliResult refused
        = cloop({ u"verify"_s, other, u"--keys"_s, m_keys, u"--signature"_s, deb + u".sig"_s });
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(u"SHA-256 differs"_s), qPrintable(refused.describe()));
    // The signature relabelled to another version no longer verifies.
    QFile signature(deb + u".sig"_s);
    QVERIFY(signature.open(QIODevice::ReadOnly));
    QByteArray bytes = signature.readAll();
    signature.close();
    bytes.replace("version=0.2.0", "version=0.2.1");
    QFile forged(m_dir.filePath(u"forged.sig"_s));
    QVERIFY(forged.open(QIODevice::WriteOnly) && forged.write(bytes) == bytes.size());
    forged.close();
    const CliResult relabelled
        = cloop({ u"verify"_s, deb, u"--keys"_s, m_keys, u"--signature"_s, forged.fileName() });
    CLOOP_COMPARE_EXIT(relabelled, 1);
    QVERIFY2(
        relabelled.stderrText().contains(u"does not verify"_s), qPrintable(relabelled.describe()));
}

void TestReleaseCommands::aStrangersKeyIsRefused()
{
    const QString strangerKey = m_dir.filePath(u"stranger.pem"_s);
    CLOOP_COMPARE_EXIT(cloop({ u"keygen"_s, u"--private"_s, strangerKey, u"--public"_s,
                           m_dir.filePath(u"stranger.pub"_s) }),
        0);
    const QString deb = makePackage(u"cloop"_s, u"0.2.0-1"_s, "umbrella payload");
    CLOOP_COMPARE_EXIT(cloop({ u"sign"_s, deb, u"--key"_s, strangerKey, u"--channel"_s, u"stable"_s,
                           u"--commit"_s, m_commit }),
        0);
    const CliResult refused = cloop({ u"verify"_s, deb, u"--keys"_s, m_keys });
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(u"not a release key of this machine"_s),
        qPrintable(refused.describe()));
    // With no key at all, nothing verifies either.
    const CliResult none = cloop({ u"verify"_s, deb, u"--keys"_s, m_dir.filePath(u"none"_s) });
    CLOOP_COMPARE_EXIT(none, 1);
    QVERIFY2(none.stderrText().contains(u"it has none"_s), qPrintable(none.describe()));
}

void TestReleaseCommands::anEdgeBuildMustNameItsCommit()
{
    const QString build = makePackage(u"cloop-agent"_s, u"0.3.0~git6e750e981505-1"_s, "edge");
    // Not as a release,
    const CliResult asRelease = cloop({ u"sign"_s, build, u"--key"_s, m_private, u"--channel"_s,
        u"stable"_s, u"--commit"_s, m_commit });
    CLOOP_COMPARE_EXIT(asRelease, 1);
    // nor as the build of another commit,
    const CliResult otherCommit = cloop({ u"sign"_s, build, u"--key"_s, m_private, u"--channel"_s,
        u"edge"_s, u"--commit"_s, QString(40, u'a') });
    CLOOP_COMPARE_EXIT(otherCommit, 1);
    QVERIFY(!QFile::exists(build + u".sig"_s));
    // but as the edge build of its own.
    CLOOP_COMPARE_EXIT(cloop({ u"sign"_s, build, u"--key"_s, m_private, u"--channel"_s, u"edge"_s,
                           u"--commit"_s, m_commit }),
        0);
    const CliResult verified = cloop({ u"verify"_s, build, u"--keys"_s, m_keys });
    CLOOP_COMPARE_EXIT(verified, 0);
    QVERIFY2(verified.stdoutText().contains(u"(edge,"_s), qPrintable(verified.describe()));
}

void TestReleaseCommands::nothingIsReplaced()
{
    const QString deb = makePackage(u"cloop-hub"_s, u"0.2.0-1"_s, "hub payload");
    CLOOP_COMPARE_EXIT(cloop({ u"sign"_s, deb, u"--key"_s, m_private, u"--channel"_s, u"stable"_s,
                           u"--commit"_s, m_commit }),
        0);
    QFile signature(deb + u".sig"_s);
    QVERIFY(signature.open(QIODevice::ReadOnly));
    const QByteArray first = signature.readAll();
    signature.close();
    const CliResult again = cloop({ u"sign"_s, deb, u"--key"_s, m_private, u"--channel"_s,
        u"stable"_s, u"--commit"_s, m_commit });
    CLOOP_COMPARE_EXIT(again, 1);
    QVERIFY2(again.stderrText().contains(u"never replaced"_s), qPrintable(again.describe()));
    QVERIFY(signature.open(QIODevice::ReadOnly));
    QCOMPARE(signature.readAll(), first);
    const CliResult keyAgain
        = cloop({ u"keygen"_s, u"--private"_s, m_private, u"--public"_s, m_dir.filePath(u"x"_s) });
    CLOOP_COMPARE_EXIT(keyAgain, 1);
    QVERIFY(!QFile::exists(m_dir.filePath(u"x"_s)));
}

void TestReleaseCommands::badInputIsRefused()
{
    const QString notDeb = m_dir.filePath(u"not.deb"_s);
    QFile file(notDeb);
    QVERIFY(file.open(QIODevice::WriteOnly) && file.write("garbage") == 7);
    file.close();
    const CliResult signedGarbage = cloop({ u"sign"_s, notDeb, u"--key"_s, m_private,
        u"--channel"_s, u"stable"_s, u"--commit"_s, m_commit });
    CLOOP_COMPARE_EXIT(signedGarbage, 1);
    QVERIFY2(signedGarbage.stderrText().contains(u"not a Debian package"_s),
        qPrintable(signedGarbage.describe()));
    QVERIFY(!QFile::exists(notDeb + u".sig"_s));
    // A signature file that is not one.
    const CliResult garbageSignature
        = cloop({ u"verify"_s, notDeb, u"--keys"_s, m_keys, u"--signature"_s, notDeb });
    CLOOP_COMPARE_EXIT(garbageSignature, 1);
    QVERIFY2(garbageSignature.stderrText().contains(u"not a cloop release signature"_s),
        qPrintable(garbageSignature.describe()));
    // A key that is not one, a channel that does not exist, missing options.
    const QString deb = makePackage(u"cloop-dashboard"_s, u"0.2.0-1"_s, "dashboard payload");
    CLOOP_COMPARE_EXIT(cloop({ u"sign"_s, deb, u"--key"_s, notDeb, u"--channel"_s, u"stable"_s,
                           u"--commit"_s, m_commit }),
        1);
    CLOOP_COMPARE_EXIT(cloop({ u"sign"_s, deb, u"--key"_s, m_private, u"--channel"_s, u"nightly"_s,
                           u"--commit"_s, m_commit }),
        1);
    CLOOP_COMPARE_EXIT(cloop({ u"sign"_s, deb, u"--key"_s, m_private }), 2);
    CLOOP_COMPARE_EXIT(cloop({ u"verify"_s }), 2);
    CLOOP_COMPARE_EXIT(cloop({ u"unknown"_s }), 2);
    QVERIFY(!QFile::exists(deb + u".sig"_s));
}

void TestReleaseCommands::theHubOffersVerifiedPackagesOnly()
{
    TestRig rig;
    QVERIFY2(rig.startHub(), qPrintable(rig.lastError()));
    HubProcess &hub = rig.hub();
    const auto hubRelease = [&](const QStringList &arguments) {
        return runProgram(binaryPath(u"cloop-hub"_s),
            QStringList { u"release"_s } + arguments + QStringList { u"--data"_s, hub.dataDir() },
            childEnvironment(m_dir.path()));
    };
    const QString releases = hub.dataDir() + u"/releases"_s;
    const auto kept = [&] {
        return QDir(releases).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot);
    };
    const QString deb = makePackage(u"cloop-agent"_s, u"0.4.0-1"_s, "offered payload");
    CLOOP_COMPARE_EXIT(cloop({ u"sign"_s, deb, u"--key"_s, m_private, u"--channel"_s, u"stable"_s,
                           u"--commit"_s, m_commit }),
        0);

    // Not without a key that verifies it,
    const CliResult unverified
        = hubRelease({ u"add"_s, deb, u"--keys"_s, m_dir.filePath(u"none"_s) });
    CLOOP_COMPARE_EXIT(unverified, 1);
    QVERIFY2(unverified.stderrText().contains(u"not a release key"_s),
        qPrintable(unverified.describe()));
    QVERIFY(kept().isEmpty());
    // nor another package under its signature,
    const QString other = makePackage(u"cloop-agent"_s, u"0.4.0-2"_s, "another payload");
    const CliResult swapped
        = hubRelease({ u"add"_s, other, u"--keys"_s, m_keys, u"--signature"_s, deb + u".sig"_s });
    CLOOP_COMPARE_EXIT(swapped, 1);
    QVERIFY(kept().isEmpty());

    // but the package it signs, once.
    const CliResult added = hubRelease({ u"add"_s, deb, u"--keys"_s, m_keys });
    CLOOP_COMPARE_EXIT(added, 0);
    QVERIFY2(added.stdoutText().contains(u"cloop-agent 0.4.0 (stable, commit 6e750e981505)"_s),
        qPrintable(added.describe()));
    QCOMPARE(kept().size(), 1);
    const CliResult again = hubRelease({ u"add"_s, deb, u"--keys"_s, m_keys });
    CLOOP_COMPARE_EXIT(again, 1);
    QVERIFY2(again.stderrText().contains(u"already"_s), qPrintable(again.describe()));
    QCOMPARE(kept().size(), 1);

    // Listed with what its signature states; the kept copy is that file.
    const CliResult listed = hubRelease({ u"list"_s, u"--json"_s });
    CLOOP_COMPARE_EXIT(listed, 0);
    const QJsonArray items
        = QJsonDocument::fromJson(listed.out).object().value(u"items"_s).toArray();
    QCOMPARE(items.size(), 1);
    const QJsonObject release = items.first().toObject();
    QCOMPARE(release.value(u"package"_s).toString(), u"cloop-agent"_s);
    QCOMPARE(release.value(u"version"_s).toString(), u"0.4.0"_s);
    QCOMPARE(release.value(u"channel"_s).toString(), u"stable"_s);
    QCOMPARE(release.value(u"commit"_s).toString(), m_commit);
    QFile original(deb);
    QVERIFY(original.open(QIODevice::ReadOnly));
    QFile copy(releases + u"/"_s + kept().constFirst());
    QVERIFY(copy.open(QIODevice::ReadOnly));
    QCOMPARE(copy.readAll(), original.readAll());
    // And audited.
    const QJsonArray audit
        = hub.cliItems({ u"audit"_s, u"--action"_s, u"release.add"_s, u"--json"_s });
    QCOMPARE(audit.size(), 1);
    QCOMPARE(
        audit.first().toObject().value(u"subject"_s).toString(), u"release:cloop-agent 0.4.0"_s);
}

QTEST_GUILESS_MAIN(TestReleaseCommands)
#include "tst_releasecommands.moc"
