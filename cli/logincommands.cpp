#include "cli/logincommands.h"

#include "common/api/identity.h"

#include "cli/command.h"
#include "cli/output.h"
#include "cli/storedlogin.h"
#include "common/net/keyprobe.h"
#include "common/net/spkipin.h"

#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>

#include <csignal>
#include <cstdio>
#include <optional>
#include <termios.h>
#include <unistd.h>

namespace cloop::cli {

namespace {

constexpr qint64 kMaxTokenLine = 64 * 1024;

// The terminal's settings while a token is typed without echo, restored
// even when the person gives up with Ctrl-C.
termios g_savedTerminal {};

void restoreTerminalAndDie(int signalNumber)
{
    ::tcsetattr(STDIN_FILENO, TCSANOW, &g_savedTerminal);
    std::signal(signalNumber, SIG_DFL);
    std::raise(signalNumber);
}

// One line of stdin; on a terminal, asked for and typed without echo.
QString readTokenFromStdin(const QString &prompt)
{
    const bool terminal
        = ::isatty(STDIN_FILENO) == 1 && ::tcgetattr(STDIN_FILENO, &g_savedTerminal) == 0;
    if (terminal) {
        std::fputs(prompt.toUtf8().constData(), stderr);
        std::fflush(stderr);
        termios quiet = g_savedTerminal;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        std::signal(SIGINT, restoreTerminalAndDie);
        std::signal(SIGTERM, restoreTerminalAndDie);
        ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    QFile input;
    QString line;
    if (input.open(stdin, QIODevice::ReadOnly))
        line = QString::fromUtf8(input.readLine(kMaxTokenLine)).trimmed();
    if (terminal) {
        ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_savedTerminal);
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        std::fputc('\n', stderr);
    }
    return line;
}

Result<QString> readTokenFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
    return QString::fromUtf8(file.readLine(kMaxTokenLine)).trimmed();
}

// The key the hub presents, read in a handshake that sends nothing.
Result<QString> offeredKey(const QUrl &hub)
{
    net::KeyProbe probe;
    QObject context;
    QEventLoop loop;
    std::optional<Result<QString>> offered;
    probe.probe(hub, &context, [&](const Result<QString> &pin) {
        offered = pin;
        loop.quit();
    });
    if (!offered)
        loop.exec();
    return *offered;
}

// Asks on the terminal, as ssh does (stdin may be carrying the token);
// nullopt when this process has no terminal to ask on.
std::optional<bool> confirmOnTerminal(const QString &question)
{
    QFile terminal(QStringLiteral("/dev/tty"));
    if (!terminal.open(QIODevice::ReadWrite | QIODevice::Unbuffered))
        return std::nullopt;
    terminal.write(question.toUtf8());
    const QString answer = QString::fromUtf8(terminal.readLine(64)).trimmed().toLower();
    return answer == QLatin1String("y") || answer == QLatin1String("yes");
}

QString whoText(const api::Identity &me)
{
    return me.hubAdmin ? QStringLiteral("%1 (hub administrator)").arg(me.user) : me.user;
}

} // namespace

int runLoginCommand(const QStringList &arguments)
{
    Command command(QStringLiteral("login"),
        QStringLiteral(
            "Remember a hub and your API token for it, after proving that the token "
            "works. The token is read from --token-file or from stdin (one line), never "
            "from the command line, and kept in the system keyring; where no keyring is "
            "reachable, in ~/.cloop/login.json (mode 0600). Each login is a context, "
            "named user@host:port unless --name says otherwise; the newest is current, and "
            "admin commands use it when given neither --hub, --data nor --context "
            "(cloop context list, cloop context use NAME)."),
        Command::Endpoint::None);
    const QCommandLineOption hub(
        QStringLiteral("hub"), QStringLiteral("Hub URL (wss://HOST:PORT)."), QStringLiteral("URL"));
    const QCommandLineOption pin(QStringLiteral("pin"),
        QStringLiteral("The hub's key pin, sha256:…"), QStringLiteral("PIN"));
    const QCommandLineOption ca(QStringLiteral("ca"),
        QStringLiteral("Also trust this PEM CA for the hub."), QStringLiteral("FILE"));
    const QCommandLineOption tokenFile(QStringLiteral("token-file"),
        QStringLiteral("Read the API token from this file (first line)."), QStringLiteral("FILE"));
    const QCommandLineOption noKeyring(QStringLiteral("no-keyring"),
        QStringLiteral("Keep the token in ~/.cloop/login.json (0600) without trying "
                       "the keyring."));
    const QCommandLineOption name(QStringLiteral("name"),
        QStringLiteral("Call this login NAME (default user@host:port); a login of that name is "
                       "replaced."),
        QStringLiteral("NAME"));
    command.addOptions({ hub, pin, ca, tokenFile, noKeyring, name });
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral(
        "cloop login --hub URL [--pin sha256:…] [--ca FILE] [--token-file FILE] [--name NAME]");
    if (auto given = command.positionals(0, syntax); !given)
        return command.usageError(
            given.error().message + QStringLiteral("; the token is never an argument"));
    auto hubText = command.required(hub, syntax);
    if (!hubText)
        return command.usageError(hubText.error().message);
    const QUrl url(*hubText, QUrl::StrictMode);
    if (Status check = checkAdminUrl(url); !check)
        return command.usageError(check.error().message);
    if (command.isSet(name)) {
        if (Status valid = StoredLogin::validateName(command.value(name)); !valid)
            return command.usageError(valid.error().message);
    }
    const QString caFile
        = command.isSet(ca) ? QFileInfo(command.value(ca)).absoluteFilePath() : QString();
    QString pinText = command.value(pin);
    // First contact without a pin or a CA: the key the hub presents is
    // shown and trusted only when the person says so, before any token.
    if (!command.isSet(pin) && !command.isSet(ca)) {
        auto offered = offeredKey(url);
        if (!offered)
            return command.failed(offered.error());
        const std::optional<bool> trusted = confirmOnTerminal(
            QStringLiteral("The hub at %1 presents the key\n  %2\nCompare it with what `cloop hub "
                           "pin` prints on the hub's machine.\nTrust this key and log in? [y/N] ")
                .arg(url.toString(), net::PinSet::grouped(*offered)));
        if (!trusted)
            return command.usageError(
                QStringLiteral("the hub's key is not pinned and there is no terminal to ask on: "
                               "it presents %1; compare it with `cloop hub pin` on the hub's "
                               "machine and log in with --pin %1")
                    .arg(*offered));
        if (!*trusted)
            return command.failed(Error::make(QStringLiteral("not_trusted"),
                QStringLiteral("the key %1 was not trusted: nothing was sent").arg(*offered)));
        pinText = *offered;
    }
    auto trust = makeHubTrust(pinText, caFile);
    if (!trust)
        return command.usageError(trust.error().message);

    QString token;
    if (command.isSet(tokenFile)) {
        auto read = readTokenFile(command.value(tokenFile));
        if (!read)
            return command.usageError(read.error().message);
        token = *read;
    } else {
        token = readTokenFromStdin(QStringLiteral("API token for %1: ").arg(url.toString()));
    }
    if (token.isEmpty())
        return command.usageError(
            QStringLiteral("no API token given (one line on stdin, or --token-file FILE)"));

    AdminClient client(AdminEndpoint { url, token, *trust, QStringLiteral("cloop login") });
    auto me = recordOf<api::Identity>(client.get(QStringLiteral("/api/whoami")));
    if (!me)
        return command.failed(me.error());

    const StoredLogin store;
    LoginRecord login;
    login.name = command.isSet(name)
        ? command.value(name)
        : QStringLiteral("%1@%2:%3").arg(me->user, url.host()).arg(url.port(443));
    login.user = me->user;
    login.hub = url;
    login.pin = trust->pins().toString();
    login.caFile = caFile;
    auto saved = store.save(login, token, !command.isSet(noKeyring));
    if (!saved)
        return command.failed(saved.error());
    if (saved->place == LoginRecord::TokenPlace::File)
        warn(command.name(),
            QStringLiteral("the token is stored in the file %1 (mode 0600), not in a keyring (%2)")
                .arg(store.filePath(),
                    command.isSet(noKeyring) ? QStringLiteral("--no-keyring")
                                             : saved->keyringProblem));
    printLine(QStringLiteral("Logged in to %1 as %2; context \"%3\" is now current.")
                  .arg(url.toString(), whoText(*me), login.name));
    return kExitOk;
}

int runLogoutCommand(const QStringList &arguments)
{
    Command command(QStringLiteral("logout"),
        QStringLiteral("Forget a stored login, the current one unless --name says which: its "
                       "token in the keyring and its entry in ~/.cloop/login.json. The token "
                       "itself stays valid on the hub."),
        Command::Endpoint::None);
    const QCommandLineOption name(QStringLiteral("name"),
        QStringLiteral("The login (context) to forget."), QStringLiteral("NAME"));
    command.addOptions({ name });
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop logout [--name NAME]")); !given)
        return command.usageError(given.error().message);
    const StoredLogin store;
    auto removed = store.remove(command.value(name));
    if (!removed)
        return removed.error().code == QLatin1String("usage")
            ? command.usageError(removed.error().message)
            : command.failed(removed.error());
    if (!removed->wasLoggedIn) {
        printLine(QStringLiteral("Not logged in."));
        return kExitOk;
    }
    printLine(removed->login ? QStringLiteral("Logged out of %1 (context \"%2\").")
                                   .arg(removed->login->hub.toString(), removed->login->name)
                             : QStringLiteral("Removed the damaged %1.").arg(store.filePath()));
    if (!removed->others.isEmpty())
        printLine(QStringLiteral("No context is current now; the others: %1 "
                                 "(cloop context use NAME).")
                      .arg(removed->others.join(QStringLiteral(", "))));
    if (!removed->keyringProblem.isEmpty())
        return command.failed(
            Error::make(QStringLiteral("keyring_error"), removed->keyringProblem));
    return kExitOk;
}

int runWhoamiCommand(const QStringList &arguments)
{
    Command command(QStringLiteral("whoami"),
        QStringLiteral("Show who the hub takes you for, and your roles."));
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop whoami [--json]")); !given)
        return command.usageError(given.error().message);
    auto answer = command.get(QStringLiteral("/api/whoami"));
    if (!answer)
        return command.failed(answer.error());
    // Which hub, and whose token: what the text says too.
    QJsonObject described = *answer;
    described.insert(QStringLiteral("hub"), command.endpoint().url.toString());
    described.insert(QStringLiteral("token_source"), command.endpoint().source);
    if (command.printedJson(described))
        return kExitOk;
    auto me = api::Identity::fromJson(*answer);
    if (!me)
        return command.failed(me.error());
    printLine(QStringLiteral("%1 on %2").arg(whoText(*me), command.endpoint().url.toString()));
    printLine(QStringLiteral("token from %1").arg(command.endpoint().source));
    if (me->roles.isEmpty()) {
        printLine(QStringLiteral("No role in any project."));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const api::Identity::Role &role : std::as_const(me->roles))
        rows.append({ role.project, api::projectRoleName(role.role) });
    printLine(QString());
    printLine(formatTable({ QStringLiteral("PROJECT"), QStringLiteral("ROLE") }, rows));
    return kExitOk;
}

} // namespace cloop::cli
