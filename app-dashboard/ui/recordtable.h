#pragma once

#include <QJsonObject>
#include <QWidget>

class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace cloop::dashboard {

class JsonListing;

// A JsonListing as a sortable, filterable table with a line for its load
// error and room for buttons that act on the selected record. Its columns
// fit the width it has: short ones keep their natural width, the widest
// (reasons, details) give way and end in "…", whole in their tooltips.
class RecordTable final : public QWidget
{
    Q_OBJECT

public:
    RecordTable(JsonListing *listing, const QString &filterHint, QWidget *parent = nullptr);

    // Buttons go to the right of the filter; they are enabled only while a
    // record is selected when `needsSelection` is set.
    void addButton(QWidget *button, bool needsSelection = true);
    void setEmptyText(const QString &text);
    QJsonObject selectedRecord() const;
    // Selects the row of the record with this id, if it is shown.
    bool selectRecord(qint64 id);

    QTableView *view() const { return m_view; }
    QLineEdit *filterEdit() const { return m_filter; }
    QLabel *errorLabel() const { return m_error; }
    int visibleRows() const;

Q_SIGNALS:
    void selectionChanged();
    void activated(const QJsonObject &record);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void updateButtons();
    // Narrows the widest columns until all fit the viewport.
    void fitColumns();

    JsonListing *m_listing;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLineEdit *m_filter;
    QLabel *m_error;
    QLabel *m_empty;
    QHBoxLayout *m_bar;
    QList<QWidget *> m_selectionButtons;
    // Each column's width for its contents, as last loaded.
    QList<int> m_naturalWidths;
};

} // namespace cloop::dashboard
