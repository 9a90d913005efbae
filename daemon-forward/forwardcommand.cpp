#include "daemon-forward/forwardcommand.h"

#include "cloop/buildinfo.h"
#include "common/logging.h"
#include "common/util/unixsignalwatcher.h"
#include "daemon-forward/forwarderdaemon.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <csignal>
#include <cstdio>

namespace cloop::forward {

int runForwarderCommand(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
            "Carries one enrolled device to the cloop hub over an outbound tunnel.\n"
            "First start: cloop forward --bundle cloopfwd1.…  Afterwards: cloop forward"));
    parser.addHelpOption();
    const QCommandLineOption bundle(QStringLiteral("bundle"), QStringLiteral("Enroll with this bundle."),
                                    QStringLiteral("BUNDLE"));
    const QCommandLineOption tokenFile(QStringLiteral("token-file"),
                                       QStringLiteral("Enroll with the bundle in this file, deleted once redeemed."),
                                       QStringLiteral("FILE"));
    const QCommandLineOption credential(QStringLiteral("credential-file"),
                                        QStringLiteral("Where the credential is kept (default ~/.cloop/forwarder.json)."),
                                        QStringLiteral("FILE"));
    const QCommandLineOption ca(QStringLiteral("ca"), QStringLiteral("Also trust this PEM CA for the hub."),
                                QStringLiteral("FILE"));
    const QCommandLineOption insecure(QStringLiteral("insecure-plaintext"),
                                      QStringLiteral("Allow ws:// to a host that is not loopback (warns on every attempt)."));
    parser.addOptions({bundle, tokenFile, credential, ca, insecure});
    if (!parser.parse(arguments)) {
        std::fprintf(stderr, "cloop forward: %s\n", qPrintable(parser.errorText()));
        return ForwarderDaemon::kExitUsage;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(parser.helpText()), stdout);
        return 0;
    }
    if (!parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "cloop forward: unexpected argument \"%s\" (see --help)\n",
                     qPrintable(parser.positionalArguments().first()));
        return ForwarderDaemon::kExitUsage;
    }

    ForwarderDaemonOptions options;
    options.bundle = parser.value(bundle);
    options.tokenFile = parser.value(tokenFile);
    options.credentialPath = parser.value(credential);
    options.caFile = parser.value(ca);
    options.insecurePlaintext = parser.isSet(insecure);

    ForwarderDaemon daemon(options);
    if (Status prepared = daemon.prepare(); !prepared) {
        std::fprintf(stderr, "cloop forward: %s\n", qPrintable(prepared.error().message));
        return ForwarderDaemon::kExitUsage;
    }
    int exitCode = ForwarderDaemon::kExitStopped;
    QObject::connect(&daemon, &ForwarderDaemon::finished, qApp, [&exitCode](int code) {
        exitCode = code;
        QCoreApplication::exit(code);
    });
    util::UnixSignalWatcher signalWatcher({SIGTERM, SIGINT});
    QObject::connect(&signalWatcher, &util::UnixSignalWatcher::received, &daemon, [&daemon](int number) {
        qCInfo(lcForward).noquote() << "stopping on signal" << number;
        daemon.stop();
    });
    daemon.start();
    QCoreApplication::exec();
    return exitCode;
}

} // namespace cloop::forward
