// cloop-dashboard: sign in, then the window. Everything else lives in the
// dashboard libraries, which the tests drive directly.

#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/core/tokenstore.h"
#include "app-dashboard/ui/appearance.h"
#include "app-dashboard/ui/dashboardsession.h"
#include "app-dashboard/ui/language.h"
#include "common/util/versionreport.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

#include <cstdio>

using namespace cloop;
using namespace cloop::dashboard;

int main(int argc, char **argv)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Bind, unbind and test device forwarders of a cloop hub."));
    const QCommandLineOption help(
        { QStringLiteral("h"), QStringLiteral("help") }, QStringLiteral("Displays this help."));
    const QCommandLineOption version({ QStringLiteral("v"), QStringLiteral("version") },
        QStringLiteral("Displays version information."));
    const QCommandLineOption hub(QStringLiteral("hub"),
        QStringLiteral("The hub's address (wss://HOST:PORT)."), QStringLiteral("URL"));
    const QCommandLineOption pin(QStringLiteral("pin"),
        QStringLiteral("The hub's key pin (sha256:...)."), QStringLiteral("PIN"));
    const QCommandLineOption lang(QStringLiteral("lang"),
        QStringLiteral("The language (en, de); the system's by default."),
        QStringLiteral("LANGUAGE"));
    const QCommandLineOption theme(QStringLiteral("theme"),
        QStringLiteral("light or dark; the desktop's own by default."), QStringLiteral("THEME"));
    parser.addOptions({ help, version, hub, pin, lang, theme });
    // Qt's own options (-platform, -style …) are the application's to take.
    parser.setOptionsAfterPositionalArgumentsMode(QCommandLineParser::ParseAsOptions);
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments.append(QString::fromLocal8Bit(argv[i]));
    // Help and version are answered before the application exists: they
    // need no display. (Qt's own options are unknown to this first reading,
    // so its verdict waits for the application.)
    parser.parse(arguments);
    if (parser.isSet(version)) {
        std::puts(qPrintable(util::VersionReport::of(QStringLiteral("cloop-dashboard")).toText()));
        return 0;
    }
    if (parser.isSet(help)) {
        // Without an application Qt cannot know the program's name.
        std::fputs(qPrintable(parser.helpText().replace(
                       QLatin1String("<executable_name>"), QLatin1String("cloop-dashboard"))),
            stdout);
        return 0;
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("cloop-dashboard"));
    QApplication::setOrganizationName(QStringLiteral("cloop"));
    // What QApplication left are this program's own arguments.
    if (!parser.parse(QApplication::arguments())) {
        std::fprintf(stderr, "cloop-dashboard: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    installTranslations(parser.value(lang));
    if (parser.isSet(theme)) {
        const auto chosen = themeNamed(parser.value(theme));
        if (!chosen) {
            std::fprintf(stderr, "cloop-dashboard: --theme is light or dark, not \"%s\"\n",
                qPrintable(parser.value(theme)));
            return 2;
        }
        applyTheme(app, *chosen);
    }
    if (parser.isSet(hub) || parser.isSet(pin)) {
        QSettings settings;
        if (parser.isSet(hub))
            settings.setValue(QStringLiteral("hub/url"), parser.value(hub));
        if (parser.isSet(pin))
            settings.setValue(QStringLiteral("hub/pin"), parser.value(pin));
    }

    HubApi api;
    TokenStore tokens;
    QSettings settings;
    DashboardSession session(&api, &tokens, &settings);
    // A token in the environment saves typing it; it is never written anywhere.
    session.start(qEnvironmentVariable("CLOOP_TOKEN"));
    return app.exec();
}
