// cloop-dashboard: sign in, then the window. Everything else lives in the
// dashboard libraries, which the tests drive directly.

#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/core/tokenstore.h"
#include "app-dashboard/ui/appearance.h"
#include "app-dashboard/ui/language.h"
#include "app-dashboard/ui/mainwindow.h"
#include "app-dashboard/ui/signindialog.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QLineEdit>
#include <QPointer>
#include <QSettings>

#include <cstdio>

using namespace cloop;
using namespace cloop::dashboard;

namespace {

// Signs in (the dialog prefilled with what was remembered, the token from
// the keyring when it holds one) and opens the window; signing out forgets
// the token and comes back here.
void signIn(HubApi *api, TokenStore *tokens, const QString &token)
{
    QSettings settings;
    auto *dialog = new SignInDialog(api, tokens);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    const QString url = settings.value(QStringLiteral("hub/url")).toString();
    dialog->setHub(url, settings.value(QStringLiteral("hub/pin")).toString());
    dialog->setToken(token);
    if (token.isEmpty() && !url.isEmpty()) {
        tokens->load(url, dialog, [dialog](const Result<QString> &kept) {
            if (kept && dialog->tokenEdit()->text().isEmpty())
                dialog->setToken(*kept);
        });
    }
    QObject::connect(dialog, &QDialog::accepted, api, [api, tokens, dialog] {
        QSettings remembered;
        remembered.setValue(QStringLiteral("hub/url"), dialog->urlEdit()->text().trimmed());
        remembered.setValue(QStringLiteral("hub/pin"), dialog->pinEdit()->text().trimmed());
        auto *window = new MainWindow(api, dialog->identity());
        window->setAttribute(Qt::WA_DeleteOnClose);
        const QString hub = dialog->urlEdit()->text().trimmed();
        QObject::connect(window, &MainWindow::signOutRequested, api, [api, tokens, window, hub] {
            window->close();
            tokens->forget(hub, api, [](const Status &) {});
            signIn(api, tokens, QString());
        });
        window->show();
    });
    QObject::connect(dialog, &QDialog::rejected, qApp, [] {
        if (QApplication::topLevelWidgets().size() <= 1)
            QApplication::quit();
    });
    dialog->show();
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("cloop-dashboard"));
    QApplication::setOrganizationName(QStringLiteral("cloop"));
    QApplication::setQuitOnLastWindowClosed(false);

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Bind, unbind and test device forwarders of a cloop hub."));
    parser.addHelpOption();
    const QCommandLineOption hub(QStringLiteral("hub"), QStringLiteral("The hub's address (wss://HOST:PORT)."), QStringLiteral("URL"));
    const QCommandLineOption pin(QStringLiteral("pin"), QStringLiteral("The hub's key pin (sha256:...)."), QStringLiteral("PIN"));
    const QCommandLineOption lang(QStringLiteral("lang"), QStringLiteral("The language (en, de); the system's by default."),
                                  QStringLiteral("LANGUAGE"));
    const QCommandLineOption theme(QStringLiteral("theme"), QStringLiteral("light or dark; the desktop's own by default."),
                                   QStringLiteral("THEME"));
    parser.addOptions({hub, pin, lang, theme});
    parser.process(app);
    installTranslations(parser.value(lang));
    if (parser.isSet(theme)) {
        const auto chosen = themeNamed(parser.value(theme));
        if (!chosen) {
            std::fprintf(stderr, "cloop-dashboard: --theme is light or dark, not \"%s\"\n", qPrintable(parser.value(theme)));
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
    // A token in the environment saves typing it; it is never written anywhere.
    signIn(&api, &tokens, qEnvironmentVariable("CLOOP_TOKEN"));
    QObject::connect(&app, &QApplication::lastWindowClosed, &app, [] {
        if (QApplication::topLevelWidgets().isEmpty())
            QApplication::quit();
    });
    return app.exec();
}
