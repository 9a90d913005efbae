#pragma once

#include "cli/keyring.h"
#include "common/result.h"

#include <QString>
#include <QUrl>

#include <optional>

namespace cloop::cli {

// What `cloop login` remembered: the hub, how to trust it, and where the
// API token is kept.
struct LoginRecord
{
    enum class TokenPlace
    {
        Keyring,
        File
    };

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

// The stored login of `cloop login`/`cloop logout`: the non-secret part in
// ~/.cloop/login.json (mode 0600, written atomically), the token in the
// system keyring when one is reachable, else in that same file.
class StoredLogin
{
public:
    explicit StoredLogin(QString filePath = defaultFilePath());
    static QString defaultFilePath();
    const QString &filePath() const { return m_filePath; }

    // std::nullopt when nobody has logged in; an error when the file is damaged.
    Result<std::optional<LoginRecord>> load() const;
    // Reads the token from wherever the login keeps it.
    Result<QString> token(const LoginRecord &login) const;

    struct Saved
    {
        LoginRecord::TokenPlace place = LoginRecord::TokenPlace::File;
        QString keyringProblem; // why the keyring was not used, when it was tried
    };
    // Replaces any earlier login. With useKeyring the keyring is tried first.
    Result<Saved> save(const LoginRecord &login, const QString &token, bool useKeyring) const;

    struct Removed
    {
        bool wasLoggedIn = false;
        QString keyringProblem; // the token could not be removed from the keyring
    };
    Result<Removed> remove() const;

private:
    QString keyringKeyFor(const QUrl &hub) const;

    QString m_filePath;
    Keyring m_keyring;
};

} // namespace cloop::cli
