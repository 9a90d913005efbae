#pragma once

#include <QString>

namespace cloop::dashboard {

// Installs the dashboard's translation for `language` ("de", "en", or empty
// for the system locale) together with Qt's own (standard buttons), and
// returns the language in use: "en" when there is no translation for the
// one asked for.
QString installTranslations(const QString &language);

} // namespace cloop::dashboard
