#pragma once

#include <QStringList>

namespace cloop::hub::schema {

// Migrations are numbered from 1 and never edited once released: a change
// is a new migration. Each runs in one transaction.
int latestVersion();
QStringList migrationTo(int version, bool postgres);

} // namespace cloop::hub::schema
