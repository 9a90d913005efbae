#include "app-dashboard/ui/language.h"

#include "app-dashboard/core/logging.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

namespace cloop::dashboard {

QString installTranslations(const QString &language)
{
    const QLocale locale = language.isEmpty() ? QLocale::system() : QLocale(language);
    auto *dashboard = new QTranslator(QCoreApplication::instance());
    // The English one carries the plural forms, so it is loaded for English too.
    if (!dashboard->load(
            locale, QStringLiteral("dashboard"), QStringLiteral("_"), QStringLiteral(":/i18n"))
        && !dashboard->load(QStringLiteral(":/i18n/dashboard_en.qm"))) {
        qCWarning(lcDashboardUi) << "no translation of the dashboard found";
        delete dashboard;
        return QStringLiteral("en");
    }
    QCoreApplication::installTranslator(dashboard);
    const QString used = dashboard->language().section(QLatin1Char('_'), 0, 0);
    if (!language.isEmpty() && used != locale.name().section(QLatin1Char('_'), 0, 0))
        qCInfo(lcDashboardUi).noquote()
            << "no dashboard translation for" << language << "- using English";
    auto *qt = new QTranslator(QCoreApplication::instance());
    if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
            QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QCoreApplication::installTranslator(qt);
    else
        delete qt;
    return used.isEmpty() ? QStringLiteral("en") : used;
}

} // namespace cloop::dashboard
