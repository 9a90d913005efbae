#pragma once

#include "cli/keyring.h"
#include "common/result.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <optional>

namespace cloop::cli {

// What `cloop login` remembered, as one named context: the hub, how to
// trust it, who the token belongs to, and where the token is kept.
struct LoginRecord
{
    enum class TokenPlace
    {
        Keyring,
        File
    };

    QString name; // "admin@hub.lab.example:7443" unless `cloop login --name` said
    QString user; // whom the hub took the token for at login
    QUrl hub;
    QString pin; // empty when the hub's certificate is publicly trusted
    QString caFile; // absolute path of an extra CA, or empty
    TokenPlace tokenPlace = TokenPlace::File;
    QString keyringKey; // with TokenPlace::Keyring
    QString token; // with TokenPlace::File only

    // The same hub whether it is written wss:// or https://, with or
    // without its default port.
    bool isFor(const QUrl &url) const;
};

// The stored logins of `cloop login`/`cloop logout`, as contexts in the
// manner of kubectl: each a hub and a token, one of them current. The
// non-secret part is in ~/.cloop/login.json (mode 0600, written
// atomically), each token in the system keyring when one is reachable,
// else in that same file. A file from before contexts (one login) reads as
// the current context "default".
class StoredLogin
{
public:
    explicit StoredLogin(QString filePath = defaultFilePath());
    static QString defaultFilePath();
    const QString &filePath() const { return m_filePath; }

    struct Contexts
    {
        QString current; // empty when none is
        QList<LoginRecord> all; // by name
        const LoginRecord *named(const QString &name) const;
    };
    // None when nobody has logged in; an error when the file is damaged.
    Result<Contexts> contexts() const;
    // The current context; std::nullopt when there is none.
    Result<std::optional<LoginRecord>> load() const;
    // The context called `name`; an error naming the others when there is none.
    Result<LoginRecord> context(const QString &name) const;
    // Makes `name` the current context.
    Status use(const QString &name) const;
    // Reads the token from wherever the login keeps it.
    Result<QString> token(const LoginRecord &login) const;

    struct Saved
    {
        LoginRecord::TokenPlace place = LoginRecord::TokenPlace::File;
        QString keyringProblem; // why the keyring was not used, when it was tried
    };
    // Adds the context login.name, or replaces the one of that name, and
    // makes it current. With useKeyring the keyring is tried first.
    Result<Saved> save(const LoginRecord &login, const QString &token, bool useKeyring) const;

    struct Removed
    {
        bool wasLoggedIn = false;
        std::optional<LoginRecord> login; // what was removed, when it could be read
        QStringList others; // the contexts left
        QString keyringProblem; // the token could not be removed from the keyring
    };
    // Removes the context `name`, or the current one when `name` is empty.
    Result<Removed> remove(const QString &name = {}) const;

    // What a context name may be: 1-100 of letters, digits, '.', '_', '-',
    // '@' and ':'.
    static Status validateName(const QString &name);

private:
    QString keyringKeyFor(const QString &name, const QUrl &hub) const;
    Status write(const Contexts &contexts) const;

    QString m_filePath;
    Keyring m_keyring;
};

} // namespace cloop::cli
