#include "cli/storedlogin.h"

#include "common/util/atomicfile.h"
#include "common/util/didyoumean.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <algorithm>

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

QString StoredLogin::keyringKeyFor(const QString &name, const QUrl &hub) const
{
    // The file's path keeps two HOMEs of one person (a test's, say) apart,
    // the context's name two logins to one hub.
    return QStringLiteral("API token for %1 at %2 (%3)").arg(name, hub.toString(), m_filePath);
}

Status StoredLogin::validateName(const QString &name)
{
    static const QRegularExpression allowed(QStringLiteral("\\A[A-Za-z0-9._@:-]{1,100}\\z"));
    if (!allowed.match(name).hasMatch())
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("\"%1\" is not a context name: 1 to 100 of letters, digits, '.', '_', "
                           "'-', '@' and ':'")
                .arg(name.left(100)),
            true);
    return {};
}

const LoginRecord *StoredLogin::Contexts::named(const QString &name) const
{
    for (const LoginRecord &login : all) {
        if (login.name == name)
            return &login;
    }
    return nullptr;
}

namespace {

Result<LoginRecord> readRecord(const QString &path, const QString &name, const QJsonObject &object)
{
    LoginRecord login;
    login.name = name;
    login.user = object.value(QLatin1String("user")).toString();
    login.hub = QUrl(object.value(QLatin1String("hub")).toString(), QUrl::StrictMode);
    login.pin = object.value(QLatin1String("pin")).toString();
    login.caFile = object.value(QLatin1String("ca")).toString();
    if (!login.hub.isValid() || login.hub.host().isEmpty())
        return damaged(path, QStringLiteral("context \"%1\" has no hub URL").arg(name));
    const QString place = object.value(QLatin1String("token_in")).toString();
    if (place == kInKeyring) {
        login.tokenPlace = LoginRecord::TokenPlace::Keyring;
        login.keyringKey = object.value(QLatin1String("keyring_key")).toString();
        if (login.keyringKey.isEmpty())
            return damaged(path, QStringLiteral("context \"%1\" names no keyring entry").arg(name));
    } else if (place == kInFile) {
        login.tokenPlace = LoginRecord::TokenPlace::File;
        login.token = object.value(QLatin1String("token")).toString();
        if (login.token.isEmpty())
            return damaged(path, QStringLiteral("context \"%1\" has no token").arg(name));
    } else {
        return damaged(
            path, QStringLiteral("context \"%1\" does not say where its token is").arg(name));
    }
    return login;
}

QJsonObject writtenRecord(const LoginRecord &login)
{
    QJsonObject object { { QStringLiteral("hub"), login.hub.toString() } };
    if (!login.user.isEmpty())
        object.insert(QStringLiteral("user"), login.user);
    if (!login.pin.isEmpty())
        object.insert(QStringLiteral("pin"), login.pin);
    if (!login.caFile.isEmpty())
        object.insert(QStringLiteral("ca"), login.caFile);
    if (login.tokenPlace == LoginRecord::TokenPlace::Keyring) {
        object.insert(QStringLiteral("token_in"), kInKeyring);
        object.insert(QStringLiteral("keyring_key"), login.keyringKey);
    } else {
        object.insert(QStringLiteral("token_in"), kInFile);
        object.insert(QStringLiteral("token"), login.token);
    }
    return object;
}

} // namespace

Result<StoredLogin::Contexts> StoredLogin::contexts() const
{
    Contexts contexts;
    QFile file(m_filePath);
    if (!file.exists())
        return contexts;
    if (!file.open(QIODevice::ReadOnly))
        return damaged(m_filePath, file.errorString());
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(file.read(1024 * 1024), &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return damaged(m_filePath, QStringLiteral("not a JSON object"));
    const QJsonObject object = document.object();
    // One login at the top: the file of a version before contexts.
    if (object.contains(QLatin1String("hub"))) {
        auto login = readRecord(m_filePath, QStringLiteral("default"), object);
        if (!login)
            return login.error();
        contexts.current = login->name;
        contexts.all.append(*login);
        return contexts;
    }
    const QJsonObject named = object.value(QLatin1String("contexts")).toObject();
    for (auto it = named.begin(); it != named.end(); ++it) {
        auto login = readRecord(m_filePath, it.key(), it.value().toObject());
        if (!login)
            return login.error();
        contexts.all.append(*login);
    }
    contexts.current = object.value(QLatin1String("current")).toString();
    if (!contexts.current.isEmpty() && !contexts.named(contexts.current))
        return damaged(m_filePath,
            QStringLiteral("its current context \"%1\" is not in it").arg(contexts.current));
    return contexts;
}

Result<std::optional<LoginRecord>> StoredLogin::load() const
{
    auto all = contexts();
    if (!all)
        return all.error();
    const LoginRecord *current = all->named(all->current);
    return current ? std::optional<LoginRecord>(*current) : std::nullopt;
}

Result<LoginRecord> StoredLogin::context(const QString &name) const
{
    auto all = contexts();
    if (!all)
        return all.error();
    if (const LoginRecord *login = all->named(name))
        return *login;
    QStringList names;
    for (const LoginRecord &login : std::as_const(all->all))
        names.append(login.name);
    return Error::make(QStringLiteral("usage"),
        names.isEmpty()
            ? QStringLiteral("no context \"%1\": there is none yet (cloop login --name %1)")
                  .arg(name)
            : QStringLiteral("no context \"%1\"%2; there are: %3")
                  .arg(name, util::didYouMean(name, names), names.join(QStringLiteral(", "))),
        true);
}

Status StoredLogin::use(const QString &name) const
{
    auto login = context(name);
    if (!login)
        return login.error();
    auto all = contexts();
    if (!all)
        return all.error();
    all->current = name;
    return write(*all);
}

Status StoredLogin::write(const Contexts &contexts) const
{
    QJsonObject named;
    for (const LoginRecord &login : contexts.all)
        named.insert(login.name, writtenRecord(login));
    QJsonObject object { { QStringLiteral("contexts"), named } };
    if (!contexts.current.isEmpty())
        object.insert(QStringLiteral("current"), contexts.current);
    return util::writeFileAtomically(
        m_filePath, QJsonDocument(object).toJson(QJsonDocument::Indented), 0600);
}

Result<QString> StoredLogin::token(const LoginRecord &login) const
{
    if (login.tokenPlace == LoginRecord::TokenPlace::File)
        return login.token;
    auto token = m_keyring.read(login.keyringKey);
    if (!token || token->isEmpty())
        return Error::make(QStringLiteral("login_token_unavailable"),
            QStringLiteral("cannot read the API token of context \"%1\" (%2) from the keyring "
                           "(%3); unlock the keyring, or run `cloop login` again")
                .arg(login.name, login.hub.toString(),
                    token ? QStringLiteral("it is empty") : token.error().message),
            true);
    return token;
}

Result<StoredLogin::Saved> StoredLogin::save(
    const LoginRecord &login, const QString &token, bool useKeyring) const
{
    if (Status valid = validateName(login.name); !valid)
        return valid.error();
    auto all = contexts();
    if (!all)
        return all.error();
    const std::optional<LoginRecord> previous = all->named(login.name)
        ? std::optional<LoginRecord>(*all->named(login.name))
        : std::nullopt;
    Saved saved;
    LoginRecord stored = login;
    const QString key = keyringKeyFor(login.name, login.hub);
    if (useKeyring) {
        if (Status written = m_keyring.write(key, token); written)
            saved.place = LoginRecord::TokenPlace::Keyring;
        else
            saved.keyringProblem = written.error().message;
    }
    stored.tokenPlace = saved.place;
    stored.keyringKey = saved.place == LoginRecord::TokenPlace::Keyring ? key : QString();
    stored.token = saved.place == LoginRecord::TokenPlace::File ? token : QString();
    all->all.removeIf([&](const LoginRecord &other) { return other.name == login.name; });
    all->all.append(stored);
    std::sort(all->all.begin(), all->all.end(),
        [](const LoginRecord &a, const LoginRecord &b) { return a.name < b.name; });
    all->current = login.name;
    if (Status written = write(*all); !written) {
        if (saved.place == LoginRecord::TokenPlace::Keyring)
            (void)m_keyring.remove(key);
        return written.error();
    }
    // The replaced context's token must not outlive it in the keyring.
    if (previous && previous->tokenPlace == LoginRecord::TokenPlace::Keyring
        && (previous->keyringKey != key || saved.place != LoginRecord::TokenPlace::Keyring))
        (void)m_keyring.remove(previous->keyringKey);
    return saved;
}

Result<StoredLogin::Removed> StoredLogin::remove(const QString &name) const
{
    Removed removed;
    if (!QFile::exists(m_filePath))
        return removed;
    auto all = contexts();
    if (!all) {
        // A damaged file is removed all the same: there is nothing in it to keep.
        removed.wasLoggedIn = true;
        QFile file(m_filePath);
        if (!file.remove())
            return Error::make(QStringLiteral("io_error"),
                QStringLiteral("cannot remove %1: %2").arg(m_filePath, file.errorString()));
        return removed;
    }
    const QString which = name.isEmpty() ? all->current : name;
    const LoginRecord *login = all->named(which);
    if (!login) {
        if (!name.isEmpty())
            return context(name).error();
        return removed; // no current context: nobody is logged in here
    }
    removed.wasLoggedIn = true;
    removed.login = *login;
    if (login->tokenPlace == LoginRecord::TokenPlace::Keyring) {
        if (Status deleted = m_keyring.remove(login->keyringKey); !deleted)
            removed.keyringProblem
                = QStringLiteral(
                    "the keyring entry \"%1\" of service \"%2\" could not be removed: %3")
                      .arg(login->keyringKey, kKeyringService, deleted.error().message);
    }
    all->all.removeIf([&](const LoginRecord &other) { return other.name == which; });
    if (all->current == which)
        all->current.clear();
    for (const LoginRecord &other : std::as_const(all->all))
        removed.others.append(other.name);
    if (all->all.isEmpty()) {
        QFile file(m_filePath);
        if (!file.remove())
            return Error::make(QStringLiteral("io_error"),
                QStringLiteral("cannot remove %1: %2").arg(m_filePath, file.errorString()));
        return removed;
    }
    if (Status written = write(*all); !written)
        return written.error();
    return removed;
}

} // namespace cloop::cli
