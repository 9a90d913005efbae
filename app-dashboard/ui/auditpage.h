#pragma once

#include <QWidget>

class QComboBox;

namespace cloop::dashboard {

class HubApi;
class JsonListing;
class RecordTable;

// Audit: who did what to what, newest first, over a chosen period, filtered
// by any text. Hub administrators only; others see the hub's refusal.
class AuditPage final : public QWidget
{
    Q_OBJECT

public:
    explicit AuditPage(HubApi *api, QWidget *parent = nullptr);

    void refresh();
    RecordTable *table() const { return m_table; }
    QComboBox *periodBox() const { return m_period; }
    JsonListing *listing() const { return m_listing; }

private:
    JsonListing *m_listing;
    RecordTable *m_table;
    QComboBox *m_period;
};

} // namespace cloop::dashboard
