#include "cli/storedlogin.h"

#include "common/util/atomicfile.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

namespace cloop::cli {

namespace {

const QString kKeyringService = QStringLiteral("cloop");
const QString kInKeyring = QStringLiteral("keyring");
const QString kInFile = QStringLiteral("file");

bool isSecureScheme(const QString &scheme)
{
    return scheme == QLatin1String("wss") || scheme == QLatin1String("https");
}

Error damaged(const QString &path, const QString &why)
{
    return Error::make(QStringLiteral("login_damaged"),
        QStringLiteral("%1 is damaged (%2); run `cloop logout`, then `cloop login` again")
            .arg(path, why),
        true);
}

} // namespace

bool LoginRecord::isFor(const QUrl &url) const
{
    const bool secure = isSecureScheme(hub.scheme());
    const int defaultPort = secure ? 443 : 80;
    return secure == isSecureScheme(url.scheme())
        && hub.host().compare(url.host(), Qt::CaseInsensitive) == 0
        && hub.port(defaultPort) == url.port(defaultPort);
}

StoredLogin::StoredLogin(QString filePath)
    : m_filePath(std::move(filePath))
    , m_keyring(kKeyringService)
{ }

QString StoredLogin::defaultFilePath()
{
    return QDir::homePath() + QLatin1String("/.cloop/login.json");
}

QString StoredLogin::keyringKeyFor(const QUrl &hub) const
{
    // The file's path keeps two HOMEs of one person (a test's, say) apart.
    return QStringLiteral("API token for %1 (%2)").arg(hub.toString(), m_filePath);
}

Result<std::optional<LoginRecord>> StoredLogin::load() const
{
    QFile file(m_filePath);
    if (!file.exists())
        return std::optional<LoginRecord>();
    if (!file.open(QIODevice::ReadOnly))
        return damaged(m_filePath, file.errorString());
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(file.read(64 * 1024), &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return damaged(m_filePath, QStringLiteral("not a JSON object"));
    const QJsonObject object = document.object();
    LoginRecord login;
    login.hub = QUrl(object.value(QLatin1String("hub")).toString(), QUrl::StrictMode);
    login.pin = object.value(QLatin1String("pin")).toString();
    login.caFile = object.value(QLatin1String("ca")).toString();
    if (!login.hub.isValid() || login.hub.host().isEmpty())
        return damaged(m_filePath, QStringLiteral("no hub URL"));
    const QString place = object.value(QLatin1String("token_in")).toString();
    if (place == kInKeyring) {
        login.tokenPlace = LoginRecord::TokenPlace::Keyring;
        login.keyringKey = object.value(QLatin1String("keyring_key")).toString();
        if (login.keyringKey.isEmpty())
            return damaged(m_filePath, QStringLiteral("no keyring entry named"));
    } else if (place == kInFile) {
        login.tokenPlace = LoginRecord::TokenPlace::File;
        login.token = object.value(QLatin1String("token")).toString();
        if (login.token.isEmpty())
            return damaged(m_filePath, QStringLiteral("no token"));
    } else {
        return damaged(m_filePath, QStringLiteral("it does not say where the token is"));
    }
    return std::optional<LoginRecord>(login);
}

Result<QString> StoredLogin::token(const LoginRecord &login) const
{
    if (login.tokenPlace == LoginRecord::TokenPlace::File)
        return login.token;
    auto token = m_keyring.read(login.keyringKey);
    if (!token || token->isEmpty())
        return Error::make(QStringLiteral("login_token_unavailable"),
            QStringLiteral("cannot read the API token of the login to %1 from the keyring (%2); "
                           "unlock the keyring, or run `cloop login` again")
                .arg(login.hub.toString(),
                    token ? QStringLiteral("it is empty") : token.error().message),
            true);
    return token;
}

Result<StoredLogin::Saved> StoredLogin::save(
    const LoginRecord &login, const QString &token, bool useKeyring) const
{
    auto previous = load();
    Saved saved;
    QJsonObject object { { QStringLiteral("hub"), login.hub.toString() } };
    if (!login.pin.isEmpty())
        object.insert(QStringLiteral("pin"), login.pin);
    if (!login.caFile.isEmpty())
        object.insert(QStringLiteral("ca"), login.caFile);
    const QString key = keyringKeyFor(login.hub);
    if (useKeyring) {
        if (Status written = m_keyring.write(key, token); written) {
            saved.place = LoginRecord::TokenPlace::Keyring;
        } else {
            saved.keyringProblem = written.error().message;
        }
    }
    if (saved.place == LoginRecord::TokenPlace::Keyring) {
        object.insert(QStringLiteral("token_in"), kInKeyring);
        object.insert(QStringLiteral("keyring_key"), key);
    } else {
        object.insert(QStringLiteral("token_in"), kInFile);
        object.insert(QStringLiteral("token"), token);
    }
    if (Status written = util::writeFileAtomically(
            m_filePath, QJsonDocument(object).toJson(QJsonDocument::Indented), 0600);
        !written) {
        if (saved.place == LoginRecord::TokenPlace::Keyring)
            (void)m_keyring.remove(key);
        return written.error();
    }
    // An earlier login's token must not outlive it in the keyring.
    if (previous && previous->has_value()
        && (*previous)->tokenPlace == LoginRecord::TokenPlace::Keyring
        && ((*previous)->keyringKey != key || saved.place != LoginRecord::TokenPlace::Keyring))
        (void)m_keyring.remove((*previous)->keyringKey);
    return saved;
}

Result<StoredLogin::Removed> StoredLogin::remove() const
{
    Removed removed;
    if (!QFile::exists(m_filePath))
        return removed;
    removed.wasLoggedIn = true;
    // A damaged file is removed all the same: there is nothing in it to keep.
    auto login = load();
    if (login && login->has_value() && (*login)->tokenPlace == LoginRecord::TokenPlace::Keyring) {
        if (Status deleted = m_keyring.remove((*login)->keyringKey); !deleted)
            removed.keyringProblem
                = QStringLiteral(
                    "the keyring entry \"%1\" of service \"%2\" could not be removed: %3")
                      .arg((*login)->keyringKey, kKeyringService, deleted.error().message);
    }
    QFile file(m_filePath);
    if (!file.remove())
        return Error::make(QStringLiteral("io_error"),
            QStringLiteral("cannot remove %1: %2").arg(m_filePath, file.errorString()));
    return removed;
}

} // namespace cloop::cli
