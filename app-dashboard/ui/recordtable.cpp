#include "app-dashboard/ui/recordtable.h"

#include "app-dashboard/core/jsonlisting.h"
#include "app-dashboard/ui/plainlabel.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>

namespace cloop::dashboard {

RecordTable::RecordTable(JsonListing *listing, const QString &filterHint, QWidget *parent)
    : QWidget(parent)
    , m_listing(listing)
    , m_proxy(new QSortFilterProxyModel(this))
    , m_view(new QTableView(this))
    , m_filter(new QLineEdit(this))
    , m_error(new PlainLabel(this))
    , m_empty(new PlainLabel(this))
    , m_bar(new QHBoxLayout)
{
    m_proxy->setSourceModel(listing->model());
    m_proxy->setSortRole(JsonTableModel::SortRole);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setFilterKeyColumn(-1);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_filter->setObjectName(QStringLiteral("filter"));
    m_filter->setPlaceholderText(filterHint);
    m_filter->setClearButtonEnabled(true);
    m_error->setWordWrap(true);
    m_error->setVisible(false);
    m_empty->setWordWrap(true);
    m_empty->setVisible(false);

    m_bar->addWidget(m_filter, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(m_bar);
    layout->addWidget(m_error);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_empty);

    connect(
        m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        updateButtons();
        Q_EMIT selectionChanged();
    });
    connect(m_view, &QTableView::activated, this, [this](const QModelIndex &index) {
        Q_EMIT activated(index.data(JsonTableModel::RecordRole).toJsonObject());
    });
    connect(listing, &JsonListing::errorChanged, this, [this](const QString &error) {
        m_error->setText(error.isEmpty() ? QString() : tr("Cannot load this list: %1").arg(error));
        m_error->setVisible(!error.isEmpty());
    });
    m_view->viewport()->installEventFilter(this);
    connect(listing, &JsonListing::loaded, this, [this] {
        // What each column needs for its contents and header, the last one
        // included (measured while it does not stretch).
        QHeaderView *header = m_view->horizontalHeader();
        header->setStretchLastSection(false);
        m_view->resizeColumnsToContents();
        m_naturalWidths.clear();
        for (int column = 0; column < header->count(); ++column)
            m_naturalWidths.append(header->sectionSize(column));
        header->setStretchLastSection(true);
        fitColumns();
        m_empty->setVisible(m_proxy->rowCount() == 0 && !m_empty->text().isEmpty());
        updateButtons();
    });
}

bool RecordTable::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_view->viewport() && event->type() == QEvent::Resize)
        fitColumns();
    return QWidget::eventFilter(watched, event);
}

void RecordTable::fitColumns()
{
    QHeaderView *header = m_view->horizontalHeader();
    if (m_naturalWidths.size() != header->count() || m_naturalWidths.isEmpty())
        return;
    const int available = m_view->viewport()->width();
    // Short columns (names, states, times) keep their width while the long
    // ones (reasons, details) can give way; then every column does. Below a
    // few characters a column says nothing, and the table scrolls instead.
    const int shortWidth = fontMetrics().averageCharWidth() * 30;
    const int least = fontMetrics().averageCharWidth() * 8;
    const auto widthUnder = [this](int cap, int keepUpTo) {
        int total = 0;
        for (int width : std::as_const(m_naturalWidths))
            total += width <= keepUpTo ? width : qMin(width, cap);
        return total;
    };
    // The largest cap at or above `least` under which all fits, if any.
    const auto largestCap = [&](int keepUpTo) -> std::optional<int> {
        int low = least;
        int high = *std::max_element(m_naturalWidths.cbegin(), m_naturalWidths.cend());
        if (widthUnder(high, keepUpTo) <= available)
            return high;
        if (widthUnder(low, keepUpTo) > available)
            return std::nullopt;
        while (low < high) {
            const int middle = (low + high + 1) / 2;
            if (widthUnder(middle, keepUpTo) <= available)
                low = middle;
            else
                high = middle - 1;
        }
        return low;
    };
    int keepUpTo = shortWidth;
    std::optional<int> cap = largestCap(keepUpTo);
    if (!cap) {
        keepUpTo = 0;
        cap = largestCap(keepUpTo).value_or(least);
    }
    // The last column takes what the others leave, which the cap made at
    // least its own share (resizing the others does not stretch it again).
    int others = 0;
    const int last = header->count() - 1;
    for (int column = 0; column < last; ++column) {
        const int natural = m_naturalWidths.at(column);
        const int width = natural <= keepUpTo ? natural : qMin(natural, *cap);
        header->resizeSection(column, width);
        others += width;
    }
    const int lastNatural = m_naturalWidths.at(last);
    header->resizeSection(last,
        qMax(lastNatural <= keepUpTo ? lastNatural : qMin(lastNatural, *cap), available - others));
}

void RecordTable::addButton(QWidget *button, bool needsSelection)
{
    m_bar->addWidget(button);
    if (needsSelection)
        m_selectionButtons.append(button);
    updateButtons();
}

void RecordTable::setEmptyText(const QString &text)
{
    m_empty->setText(text);
}

QJsonObject RecordTable::selectedRecord() const
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    return rows.isEmpty() ? QJsonObject()
                          : rows.first().data(JsonTableModel::RecordRole).toJsonObject();
}

bool RecordTable::selectRecord(qint64 id)
{
    const int sourceRow = m_listing->model()->rowOf(id);
    const QModelIndex at = m_proxy->mapFromSource(m_listing->model()->index(sourceRow, 0));
    if (!at.isValid())
        return false;
    m_view->selectRow(at.row());
    return true;
}

int RecordTable::visibleRows() const
{
    return m_proxy->rowCount();
}

void RecordTable::updateButtons()
{
    const bool selected = !selectedRecord().isEmpty();
    for (QWidget *button : std::as_const(m_selectionButtons))
        button->setEnabled(selected);
}

} // namespace cloop::dashboard
