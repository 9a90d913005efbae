// Unit tests of the daemon's credential file (common/identity/credentialfile.h)
// and the atomic write underneath it (common/util/atomicfile.h).

#include "common/identity/credentialfile.h"

#include "common/crypto/secrets.h"
#include "common/util/atomicfile.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace cloop;
using namespace cloop::identity;

namespace {

// Sets the process umask for one scope and restores it, also on a failed check.
class UmaskGuard
{
public:
    explicit UmaskGuard(mode_t mask)
        : m_old(::umask(mask))
    { }
    ~UmaskGuard() { ::umask(m_old); }
    UmaskGuard(const UmaskGuard &) = delete;
    UmaskGuard &operator=(const UmaskGuard &) = delete;

private:
    mode_t m_old;
};

// Gives a directory's write permission back so QTemporaryDir can clean up.
class ModeGuard
{
public:
    ModeGuard(QString path, int mode)
        : m_path(std::move(path))
        , m_mode(mode)
    { }
    ~ModeGuard() { ::chmod(QFile::encodeName(m_path).constData(), static_cast<mode_t>(m_mode)); }
    ModeGuard(const ModeGuard &) = delete;
    ModeGuard &operator=(const ModeGuard &) = delete;

private:
    QString m_path;
    int m_mode;
};

DaemonCredential sampleCredential()
{
    DaemonCredential credential;
    credential.server = QUrl(QStringLiteral("wss://hub.example.com:8443"));
    credential.id = 42;
    credential.name = QStringLiteral("lab-yubikey");
    credential.credential = secrets::generate(secrets::SecretKind::ForwarderCredential);
    credential.pin
        = QStringLiteral("sha256:") + QString::fromLatin1(QByteArray(32, 'a').toBase64());
    credential.enrolledAt = QDateTime::fromMSecsSinceEpoch(1'700'000'123'456, Qt::UTC);
    credential.caFile = QStringLiteral("/etc/cloop/ca.pem");
    credential.extra = QJsonObject { { QStringLiteral("work_root"), QStringLiteral("/srv/cloop") },
        { QStringLiteral("max_runs"), 4 },
        { QStringLiteral("labels"), QJsonArray { QStringLiteral("a") } } };
    return credential;
}

bool writeFile(const QString &path, const QByteArray &bytes, int mode = 0600)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size())
        return false;
    file.close();
    return ::chmod(QFile::encodeName(path).constData(), static_cast<mode_t>(mode)) == 0;
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QStringList entriesOf(const QString &dir)
{
    return QDir(dir).entryList(
        QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
}

QJsonObject validObject()
{
    return sampleCredential().toJson();
}

} // namespace

class TestCredentialFile final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();

    void saveThenLoadRoundTrip();
    void deviceRecordRoundTrip_data();
    void deviceRecordRoundTrip();
    void fileWithoutDeviceRecordStillLoads();
    void severalServersRoundTrip();
    void fileWithoutServersLoadsOneUrl();
    void serverLeadsServers();
    void emptyPinIsRefusedNamingTheFile_data();
    void emptyPinIsRefusedNamingTheFile();
    void keepPrivateNarrowsAWideMode();
    void keepPrivateRefusesAFileOfAnotherUser();
    void modeIs0600EvenWithUmaskZero();
    void missingFileIsNotEnrolled();
    void brokenFiles_data();
    void brokenFiles();
    void wideModeGivesWarning_data();
    void wideModeGivesWarning();
    void atomicReplaceLeavesOneFile();
    void createsMissingDirectories0700();
    void readOnlyDirectoryFailsAndKeepsOldFile();
    void defaultPathIsInHome();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
};

void TestCredentialFile::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void TestCredentialFile::saveThenLoadRoundTrip()
{
    const QString path = m_dir->filePath(QStringLiteral("forwarder.json"));
    const DaemonCredential saved = sampleCredential();
    const CredentialFile file(path);
    QCOMPARE(file.path(), path);

    const Status status = file.save(saved);
    QVERIFY2(status.ok(), qPrintable(status.ok() ? QString() : status.error().message));

    const auto loaded = file.load();
    QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
    QVERIFY(loaded->warnings.isEmpty());
    QVERIFY(loaded->credential.has_value());
    const DaemonCredential &back = *loaded->credential;
    QCOMPARE(back.server, saved.server);
    QCOMPARE(back.id, saved.id);
    QCOMPARE(back.name, saved.name);
    QCOMPARE(back.credential, saved.credential);
    QCOMPARE(back.pin, saved.pin);
    QCOMPARE(back.enrolledAt, saved.enrolledAt);
    QCOMPARE(back.caFile, saved.caFile);
    // Keys this layer does not know survive, for the role that owns them.
    QCOMPARE(back.extra, saved.extra);
}

void TestCredentialFile::deviceRecordRoundTrip_data()
{
    QTest::addColumn<QString>("device"); // "usb:VID:PID[:SERIAL]" or "l2:IF"
    QTest::newRow("segment") << QStringLiteral("l2:dummy1");
    QTest::newRow("usb") << QStringLiteral("usb:1050:0407");
    QTest::newRow("usb with serial") << QStringLiteral("usb:1d50:6089:HSM0001");
}

void TestCredentialFile::deviceRecordRoundTrip()
{
    QFETCH(QString, device);
    const auto spec = device.startsWith(QLatin1String("l2:"))
        ? protocol::DeviceSpec::parseInterface(device.mid(3))
        : protocol::DeviceSpec::parseUsb(device.mid(4));
    QVERIFY(spec);
    const QString path = m_dir->filePath(QStringLiteral("forwarder.json"));

    // Given a forwarder's credential with the device it was enrolled for,
    DaemonCredential saved = sampleCredential();
    saved.device = *spec;
    QVERIFY(CredentialFile(path).save(saved).ok());

    // then the file names the device as the protocol does, saved 0600,
    const QJsonObject onDisk = QJsonDocument::fromJson(readFile(path)).object();
    QCOMPARE(onDisk.value(QLatin1String("device")).toObject(), spec->toJson());
    QCOMPARE(util::fileMode(path), 0600);

    // and it reads back exactly, not among the role's other keys.
    const auto loaded = CredentialFile(path).load();
    QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
    QVERIFY(loaded->credential->device.has_value());
    QCOMPARE(*loaded->credential->device, *spec);
    QVERIFY(!loaded->credential->extra.contains(QLatin1String("device")));
    QCOMPARE(loaded->credential->extra, saved.extra);
}

void TestCredentialFile::fileWithoutDeviceRecordStillLoads()
{
    // Given a file written before forwarders recorded their device,
    QJsonObject old = validObject();
    QVERIFY(!old.contains(QLatin1String("device")));
    const QString path = m_dir->filePath(QStringLiteral("forwarder.json"));
    QVERIFY(writeFile(path, QJsonDocument(old).toJson()));

    // then it loads with no device (the forwarder records one from its
    // first welcome), and saving it with one keeps everything else.
    auto loaded = CredentialFile(path).load();
    QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
    QVERIFY(!loaded->credential->device.has_value());
    DaemonCredential upgraded = *loaded->credential;
    upgraded.device = *protocol::DeviceSpec::parseInterface(QStringLiteral("dummy1"));
    QVERIFY(CredentialFile(path).save(upgraded).ok());
    QCOMPARE(util::fileMode(path), 0600);
    const auto again = CredentialFile(path).load();
    QVERIFY(again.ok());
    QCOMPARE(again->credential->device->interfaceName, QStringLiteral("dummy1"));
    QCOMPARE(again->credential->credential, loaded->credential->credential);
    QCOMPARE(again->credential->pin, loaded->credential->pin);
}

void TestCredentialFile::severalServersRoundTrip()
{
    // Given a credential that knows the three members of its hub's cluster,
    DaemonCredential saved = sampleCredential();
    const QList<QUrl> servers { QUrl(QStringLiteral("wss://hub-b.example.com:8443")),
        QUrl(QStringLiteral("wss://hub-a.example.com:8443")),
        QUrl(QStringLiteral("ws://127.0.0.1:7443")) };
    saved.setServers(servers);
    const QString path = m_dir->filePath(QStringLiteral("forwarder.json"));
    QVERIFY(CredentialFile(path).save(saved).ok());

    // then the file names the first as "server", as it always did, and all
    // of them in order as "servers",
    const QJsonObject onDisk = QJsonDocument::fromJson(readFile(path)).object();
    QCOMPARE(onDisk.value(QLatin1String("server")).toString(),
        QStringLiteral("wss://hub-b.example.com:8443"));
    QCOMPARE(onDisk.value(QLatin1String("servers")).toArray(),
        QJsonArray::fromStringList({ QStringLiteral("wss://hub-b.example.com:8443"),
            QStringLiteral("wss://hub-a.example.com:8443"),
            QStringLiteral("ws://127.0.0.1:7443") }));

    // and they read back in that order, not among the role's other keys.
    const auto loaded = CredentialFile(path).load();
    QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
    QCOMPARE(loaded->credential->servers(), servers);
    QCOMPARE(loaded->credential->server, servers.first());
    QVERIFY(!loaded->credential->extra.contains(QLatin1String("servers")));
    QCOMPARE(loaded->credential->extra, saved.extra);
}

void TestCredentialFile::fileWithoutServersLoadsOneUrl()
{
    // Given a file written before hubs formed clusters ("server" alone),
    QJsonObject old = validObject();
    old.remove(QStringLiteral("servers"));
    const QString path = m_dir->filePath(QStringLiteral("agent.json"));
    QVERIFY(writeFile(path, QJsonDocument(old).toJson()));

    // then it loads with that one URL,
    const auto loaded = CredentialFile(path).load();
    QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
    QCOMPARE(loaded->credential->servers(),
        QList<QUrl> { QUrl(QStringLiteral("wss://hub.example.com:8443")) });
    QVERIFY(loaded->credential->moreServers.isEmpty());

    // and saved again it gains the list, which an earlier version would keep
    // among the keys it does not know.
    QVERIFY(CredentialFile(path).save(*loaded->credential).ok());
    const QJsonObject onDisk = QJsonDocument::fromJson(readFile(path)).object();
    QCOMPARE(onDisk.value(QLatin1String("servers")).toArray(),
        QJsonArray { QStringLiteral("wss://hub.example.com:8443") });
}

void TestCredentialFile::serverLeadsServers()
{
    // Given a file whose "server" was changed on its own (by hand, or by a
    // version that knew nothing of "servers"),
    QJsonObject object = validObject();
    object.insert(QStringLiteral("server"), QStringLiteral("wss://hub-c.example.com:8443"));
    object.insert(QStringLiteral("servers"),
        QJsonArray::fromStringList({ QStringLiteral("wss://hub-a.example.com:8443"),
            QStringLiteral("wss://hub-c.example.com:8443"),
            QStringLiteral("wss://hub-b.example.com:8443") }));
    const QString path = m_dir->filePath(QStringLiteral("forwarder.json"));
    QVERIFY(writeFile(path, QJsonDocument(object).toJson()));

    // then "server" is tried first, and the others after it in their order.
    const auto loaded = CredentialFile(path).load();
    QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
    QCOMPARE(loaded->credential->servers(),
        (QList<QUrl> { QUrl(QStringLiteral("wss://hub-c.example.com:8443")),
            QUrl(QStringLiteral("wss://hub-a.example.com:8443")),
            QUrl(QStringLiteral("wss://hub-b.example.com:8443")) }));
}

void TestCredentialFile::emptyPinIsRefusedNamingTheFile_data()
{
    QTest::addColumn<QJsonValue>("pin"); // undefined: no "pin" key at all
    QTest::newRow("empty") << QJsonValue(QString());
    QTest::newRow("missing") << QJsonValue(QJsonValue::Undefined);
    QTest::newRow("only commas") << QJsonValue(QStringLiteral(","));
}

void TestCredentialFile::emptyPinIsRefusedNamingTheFile()
{
    QFETCH(QJsonValue, pin);
    QJsonObject object = validObject();
    if (pin.isUndefined())
        object.remove(QStringLiteral("pin"));
    else
        object.insert(QStringLiteral("pin"), pin);
    const QString path = m_dir->filePath(QStringLiteral("agent.json"));
    QVERIFY(writeFile(path, QJsonDocument(object).toJson()));

    // A daemon never drops pinning silently: by default such a file is an
    // error that names the file,
    const auto refused = CredentialFile(path).load();
    QVERIFY2(!refused.ok(), "a credential without a pin was accepted");
    QCOMPARE(refused.error().code, QStringLiteral("credential_unpinned"));
    QVERIFY(refused.error().permanent);
    QVERIFY2(refused.error().message.contains(path), qPrintable(refused.error().message));
    QVERIFY2(refused.error().message.contains(QStringLiteral("no pin")),
        qPrintable(refused.error().message));

    // and only an explicit choice of CA-only trust reads it.
    const auto chosen = CredentialFile(path).load(net::PinRequirement::Optional);
    QVERIFY2(chosen.ok(), qPrintable(chosen.ok() ? QString() : chosen.error().message));
    QVERIFY(net::PinSet::parse(chosen->credential->pin)->isEmpty());
}

void TestCredentialFile::keepPrivateNarrowsAWideMode()
{
    const QString path = m_dir->filePath(QStringLiteral("agent.json"));
    // No file yet: nothing to keep private, nothing created.
    QVERIFY(CredentialFile(path).keepPrivate().ok());
    QVERIFY(!QFile::exists(path));
    // Given a credential others may read,
    QVERIFY(writeFile(path, QJsonDocument(validObject()).toJson(), 0644));
    // when the daemon keeps it private, then it is 0600 and still loads.
    QVERIFY(CredentialFile(path).keepPrivate().ok());
    QCOMPARE(util::fileMode(path), 0600);
    const auto loaded = CredentialFile(path).load();
    QVERIFY(loaded.ok());
    QVERIFY(loaded->warnings.isEmpty());
}

void TestCredentialFile::keepPrivateRefusesAFileOfAnotherUser()
{
    if (::geteuid() != 0)
        QSKIP("giving a file to another user needs root");
    const QString path = m_dir->filePath(QStringLiteral("agent.json"));
    QVERIFY(writeFile(path, QJsonDocument(validObject()).toJson(), 0600));
    // Given a file of an unprivileged user (nobody, 65534),
    QVERIFY(::chown(QFile::encodeName(path).constData(), 65534, 65534) == 0);
    // then a daemon of another user refuses it, naming the file and owner.
    const Status kept = CredentialFile(path).keepPrivate();
    QVERIFY(!kept.ok());
    QCOMPARE(kept.error().code, QStringLiteral("credential_file_foreign"));
    QVERIFY2(kept.error().message.contains(path), qPrintable(kept.error().message));
    QVERIFY2(
        kept.error().message.contains(QStringLiteral("65534")), qPrintable(kept.error().message));
}

void TestCredentialFile::modeIs0600EvenWithUmaskZero()
{
    const QString path = m_dir->filePath(QStringLiteral("agent.json"));
    {
        // Given a process umask that would leave a new file world-writable,
        const UmaskGuard umask(0);
        // when the credential is saved,
        const Status status = CredentialFile(path).save(sampleCredential());
        QVERIFY(status.ok());
    }
    // then the file is readable by its owner only.
    QCOMPARE(util::fileMode(path), 0600);
}

void TestCredentialFile::missingFileIsNotEnrolled()
{
    const CredentialFile file(m_dir->filePath(QStringLiteral("never-written.json")));
    const auto loaded = file.load();
    QVERIFY(loaded.ok());
    QVERIFY(!loaded->credential.has_value());
    QVERIFY(loaded->warnings.isEmpty());
    // Loading does not create it.
    QVERIFY(!QFile::exists(file.path()));
}

void TestCredentialFile::brokenFiles_data()
{
    QTest::addColumn<QByteArray>("contents");
    QTest::addColumn<QString>("problem");

    auto json = [](const QJsonObject &o) { return QJsonDocument(o).toJson(); };
    auto with = [](const QString &key, const QJsonValue &value) {
        QJsonObject o = validObject();
        o.insert(key, value);
        return o;
    };
    auto without = [](const QString &key) {
        QJsonObject o = validObject();
        o.remove(key);
        return o;
    };

    QTest::newRow("empty file") << QByteArray() << QStringLiteral("not JSON");
    QTest::newRow("not JSON") << QByteArrayLiteral("credential=cfc_abc\n")
                              << QStringLiteral("not JSON");
    QTest::newRow("truncated JSON") << json(validObject()).chopped(3) << QStringLiteral("not JSON");
    QTest::newRow("array") << QByteArrayLiteral(R"([{"credential":"cfc_x"}])")
                           << QStringLiteral("not a JSON object");
    QTest::newRow("missing credential") << json(without(QStringLiteral("credential")))
                                        << QStringLiteral("\"credential\" is missing");
    QTest::newRow("empty credential") << json(with(QStringLiteral("credential"), QString()))
                                      << QStringLiteral("\"credential\" is missing");
    QTest::newRow("unknown secret prefix")
        << json(with(QStringLiteral("credential"), QStringLiteral("xyz_abcdef")))
        << QStringLiteral("\"credential\" is not a cloop credential");
    QTest::newRow("missing id") << json(without(QStringLiteral("id")))
                                << QStringLiteral("\"id\" is not a positive integer");
    QTest::newRow("id zero") << json(with(QStringLiteral("id"), 0))
                             << QStringLiteral("\"id\" is not a positive integer");
    QTest::newRow("negative id") << json(with(QStringLiteral("id"), -3))
                                 << QStringLiteral("\"id\" is not a positive integer");
    QTest::newRow("fractional id") << json(with(QStringLiteral("id"), 1.5))
                                   << QStringLiteral("\"id\" is not a positive integer");
    // Same unchecked double -> qint64 conversion as in controlmessage.cpp:
    // refused here, undefined behaviour under -fsanitize=float-cast-overflow.
    QTest::newRow("id 1e300") << json(with(QStringLiteral("id"), 1e300))
                              << QStringLiteral("\"id\" is not a positive integer");
    QTest::newRow("id as string") << json(with(QStringLiteral("id"), QStringLiteral("42")))
                                  << QStringLiteral("\"id\" is not a positive integer");
    QTest::newRow("missing server")
        << json(without(QStringLiteral("server"))) << QStringLiteral("\"server\" is not a URL");
    QTest::newRow("server without host")
        << json(with(QStringLiteral("server"), QStringLiteral("hub")))
        << QStringLiteral("\"server\" is not a URL");
    QTest::newRow("server of another scheme")
        << json(with(QStringLiteral("server"), QStringLiteral("ftp://hub.example.com")))
        << QStringLiteral("\"server\" is not a URL: hub URL scheme \"ftp\"");
    QStringList seventeen;
    for (int i = 1; i <= 17; ++i)
        seventeen.append(QStringLiteral("wss://hub-%1.example.com").arg(i));
    QTest::newRow("servers not a list")
        << json(with(QStringLiteral("servers"), QStringLiteral("wss://hub.example.com:8443")))
        << QStringLiteral("\"servers\" is invalid: not a list of 1 to 16 hub URLs");
    QTest::newRow("servers empty") << json(with(QStringLiteral("servers"), QJsonArray()))
                                   << QStringLiteral("\"servers\" is invalid");
    QTest::newRow("servers, seventeen")
        << json(with(QStringLiteral("servers"), QJsonArray::fromStringList(seventeen)))
        << QStringLiteral("\"servers\" is invalid: not a list of 1 to 16");
    QTest::newRow("server and sixteen others")
        << json(with(QStringLiteral("servers"), QJsonArray::fromStringList(seventeen.mid(1))))
        << QStringLiteral("name more than 16 hub URLs");
    QTest::newRow("servers, twice") << json(with(QStringLiteral("servers"),
        QJsonArray::fromStringList({ QStringLiteral("wss://hub.example.com:8443"),
            QStringLiteral("wss://hub-b.example.com"),
            QStringLiteral("wss://hub-b.example.com") })))
                                    << QStringLiteral("wss://hub-b.example.com is named twice");
    QTest::newRow("servers, another scheme") << json(with(QStringLiteral("servers"),
        QJsonArray::fromStringList({ QStringLiteral("wss://hub.example.com:8443"),
            QStringLiteral("gopher://hub-b.example.com") })))
                                             << QStringLiteral("scheme \"gopher\"");
    QTest::newRow("servers, a number")
        << json(with(QStringLiteral("servers"), QJsonArray { 1 }))
        << QStringLiteral("\"servers\" is invalid: hub URLs must be strings");
    QTest::newRow("pin of another hash")
        << json(with(QStringLiteral("pin"), QStringLiteral("md5:abc")))
        << QStringLiteral("\"pin\" is invalid");
    QTest::newRow("device not an object")
        << json(with(QStringLiteral("device"), QStringLiteral("eth0")))
        << QStringLiteral("\"device\" is not a device");
    QTest::newRow("device of no kind") << json(with(QStringLiteral("device"),
        QJsonObject { { QStringLiteral("interface"), QStringLiteral("eth0") } }))
                                       << QStringLiteral("\"device\" is not a device");
    QTest::newRow("device with a bad interface name")
        << json(with(QStringLiteral("device"),
               QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
                   { QStringLiteral("interface"), QStringLiteral("../eth0") } }))
        << QStringLiteral("\"device\" is not a device");
}

void TestCredentialFile::brokenFiles()
{
    QFETCH(QByteArray, contents);
    QFETCH(QString, problem);

    const QString path = m_dir->filePath(QStringLiteral("forwarder.json"));
    QVERIFY(writeFile(path, contents));
    const auto loaded = CredentialFile(path).load();
    QVERIFY(!loaded.ok());
    QCOMPARE(loaded.error().code, QStringLiteral("credential_file_broken"));
    QVERIFY(loaded.error().permanent);
    // The message names the file and the problem.
    QVERIFY2(loaded.error().message.contains(path), qPrintable(loaded.error().message));
    QVERIFY2(loaded.error().message.contains(problem), qPrintable(loaded.error().message));
}

void TestCredentialFile::wideModeGivesWarning_data()
{
    QTest::addColumn<int>("mode");
    QTest::addColumn<bool>("warns");
    QTest::newRow("0600") << 0600 << false;
    QTest::newRow("0400") << 0400 << false;
    QTest::newRow("0700") << 0700 << false;
    QTest::newRow("0644") << 0644 << true;
    QTest::newRow("0640 (group may read)") << 0640 << true;
    QTest::newRow("0620 (group may write)") << 0620 << true;
    QTest::newRow("0604 (others may read)") << 0604 << true;
    QTest::newRow("0610 (group may execute)") << 0610 << true;
    QTest::newRow("0666") << 0666 << true;
}

void TestCredentialFile::wideModeGivesWarning()
{
    QFETCH(int, mode);
    QFETCH(bool, warns);

    const QString path = m_dir->filePath(QStringLiteral("forwarder.json"));
    QVERIFY(writeFile(path, QJsonDocument(validObject()).toJson(), mode));

    const auto loaded = CredentialFile(path).load();
    QVERIFY(loaded.ok());
    // A file others may read still works, with a warning naming the fix.
    QVERIFY(loaded->credential.has_value());
    if (!warns) {
        QVERIFY2(loaded->warnings.isEmpty(), qPrintable(loaded->warnings.join(QLatin1Char('\n'))));
        return;
    }
    QCOMPARE(loaded->warnings.size(), 1);
    const QString octal = QStringLiteral("%1").arg(mode, 4, 8, QLatin1Char('0'));
    QVERIFY2(loaded->warnings.first().contains(octal), qPrintable(loaded->warnings.first()));
    QVERIFY(loaded->warnings.first().contains(QStringLiteral("chmod 600 ") + path));
}

void TestCredentialFile::atomicReplaceLeavesOneFile()
{
    // Given an existing credential file with a wide mode,
    const QString path = m_dir->filePath(QStringLiteral("forwarder.json"));
    QVERIFY(writeFile(path, QByteArrayLiteral("old contents that are not even JSON"), 0644));

    // when a new credential is saved over it,
    DaemonCredential fresh = sampleCredential();
    fresh.name = QStringLiteral("renamed");
    const Status status = CredentialFile(path).save(fresh);
    QVERIFY(status.ok());

    // then the directory holds exactly that one file, with the new content and mode.
    QCOMPARE(entriesOf(m_dir->path()), QStringList { QStringLiteral("forwarder.json") });
    QCOMPARE(readFile(path), QJsonDocument(fresh.toJson()).toJson(QJsonDocument::Indented));
    QCOMPARE(util::fileMode(path), 0600);
    const auto loaded = CredentialFile(path).load();
    QVERIFY(loaded.ok());
    QCOMPARE(loaded->credential->name, QStringLiteral("renamed"));

    // And saving many times in a row still leaves one file.
    for (int i = 0; i < 5; ++i)
        QVERIFY(CredentialFile(path).save(fresh).ok());
    QCOMPARE(entriesOf(m_dir->path()), QStringList { QStringLiteral("forwarder.json") });
}

void TestCredentialFile::createsMissingDirectories0700()
{
    const QString top = m_dir->filePath(QStringLiteral("home/.cloop"));
    const QString path = top + QStringLiteral("/nested/forwarder.json");
    {
        // Given a umask of 0, which would make new folders 0777,
        const UmaskGuard umask(0);
        // when saving into folders that do not exist yet,
        const Status status = CredentialFile(path).save(sampleCredential());
        QVERIFY2(status.ok(), qPrintable(status.ok() ? QString() : status.error().message));
    }
    // then each created level is 0700 and the file is 0600.
    QCOMPARE(util::fileMode(m_dir->filePath(QStringLiteral("home"))), 0700);
    QCOMPARE(util::fileMode(top), 0700);
    QCOMPARE(util::fileMode(top + QStringLiteral("/nested")), 0700);
    QCOMPARE(util::fileMode(path), 0600);
    QVERIFY(CredentialFile(path).load()->credential.has_value());
}

void TestCredentialFile::readOnlyDirectoryFailsAndKeepsOldFile()
{
    if (::geteuid() == 0)
        QSKIP("root ignores directory permissions");

    const QString dir = m_dir->filePath(QStringLiteral("locked"));
    QVERIFY(QDir().mkdir(dir));
    const QString path = dir + QStringLiteral("/forwarder.json");
    const DaemonCredential old = sampleCredential();
    QVERIFY(CredentialFile(path).save(old).ok());
    const QByteArray before = readFile(path);

    // Given a folder the daemon may no longer write,
    QVERIFY(::chmod(QFile::encodeName(dir).constData(), 0500) == 0);
    const ModeGuard restore(dir, 0700);

    // when it saves,
    DaemonCredential fresh = sampleCredential();
    const Status status = CredentialFile(path).save(fresh);

    // then it fails with an error naming the place, and the old file is intact.
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, QStringLiteral("io_error"));
    QVERIFY2(status.error().message.contains(path), qPrintable(status.error().message));
    QCOMPARE(readFile(path), before);
    QCOMPARE(entriesOf(dir), QStringList { QStringLiteral("forwarder.json") });
    const auto loaded = CredentialFile(path).load();
    QVERIFY(loaded.ok());
    QCOMPARE(loaded->credential->credential, old.credential);
}

void TestCredentialFile::defaultPathIsInHome()
{
    QCOMPARE(CredentialFile::defaultPath(QStringLiteral("forwarder.json")),
        QDir::homePath() + QStringLiteral("/.cloop/forwarder.json"));
}

QTEST_GUILESS_MAIN(TestCredentialFile)
#include "tst_credentialfile.moc"
