#include "common/daemon/repincommand.h"

#include "common/identity/credentialfile.h"
#include "common/net/spkipin.h"
#include "common/util/commandline.h"

namespace cloop::daemon {

int runRepinCommand(const QStringList &arguments, const QString &defaultCredentialFile)
{
    util::CommandLine commandLine(arguments.value(0),
        QStringLiteral(
            "Pin the hub's new key in this daemon's credential, after a key rotation it\n"
            "missed. Compare the pin with what `cloop hub pin` prints on the hub."));
    const QCommandLineOption pin(QStringLiteral("pin"),
        QStringLiteral("The hub's key pin (sha256:…; several separated by commas)."),
        QStringLiteral("PIN"));
    const QCommandLineOption credentialFile(QStringLiteral("credential-file"),
        QStringLiteral("The daemon's credential (default %1).")
            .arg(identity::CredentialFile::defaultPath(defaultCredentialFile)),
        QStringLiteral("FILE"));
    commandLine.addOptions({ pin, credentialFile });
    if (auto done = commandLine.parse(arguments, false))
        return *done;
    if (!commandLine.isSet(pin))
        return commandLine.usageError(QStringLiteral("--pin is required (see --help)"));
    auto pins = net::PinSet::parse(commandLine.value(pin));
    if (!pins || pins->isEmpty())
        return commandLine.usageError(
            QStringLiteral("--pin: %1")
                .arg(pins ? QStringLiteral("no pin given") : pins.error().message));
    const identity::CredentialFile file(commandLine.isSet(credentialFile)
            ? commandLine.value(credentialFile)
            : identity::CredentialFile::defaultPath(defaultCredentialFile));
    auto loaded = file.load(net::PinRequirement::Optional);
    if (!loaded)
        return commandLine.fail(loaded.error().message);
    if (!loaded->credential)
        return commandLine.fail(
            QStringLiteral("%1 holds no credential: this machine is not enrolled")
                .arg(file.path()));
    identity::DaemonCredential credential = *loaded->credential;
    const QString before = credential.pin.isEmpty() ? QStringLiteral("none") : credential.pin;
    credential.pin = pins->toString();
    if (Status saved = file.save(credential); !saved)
        return commandLine.fail(saved.error().message);
    util::printLine(QStringLiteral("%1 now pins %2 (it pinned %3); restart the daemon to connect")
                        .arg(file.path(), credential.pin, before));
    return util::kExitOk;
}

} // namespace cloop::daemon
