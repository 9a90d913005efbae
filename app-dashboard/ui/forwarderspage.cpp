#include "app-dashboard/ui/forwarderspage.h"

#include "common/api/project.h"

#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/core/logging.h"
#include "app-dashboard/ui/binddialog.h"
#include "app-dashboard/ui/enrolldialog.h"
#include "app-dashboard/ui/forwardercard.h"
#include "app-dashboard/ui/pagetitle.h"
#include "app-dashboard/ui/plainlabel.h"
#include "app-dashboard/ui/reasondialog.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QVBoxLayout>

namespace cloop::dashboard {

namespace {

bool isRevoked(const QModelIndex &at)
{
    return api::EnrolledDaemon::parseState(at.data(ForwarderListModel::StateRole).toString())
        == api::EnrolledDaemon::State::Revoked;
}

// Matches a forwarder by name, device or the project that holds it; revoked
// ones only when asked for (they are history, as in `cloop forward list`).
class ForwarderFilter final : public QSortFilterProxyModel
{
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    void setNeedle(const QString &needle)
    {
        m_needle = needle.trimmed();
        invalidateFilter();
    }

    void setShowRevoked(bool show)
    {
        m_showRevoked = show;
        invalidateFilter();
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override
    {
        const QModelIndex at = sourceModel()->index(row, 0, parent);
        if (!m_showRevoked && isRevoked(at))
            return false;
        if (m_needle.isEmpty())
            return true;
        for (int role : { int(ForwarderListModel::NameRole), int(ForwarderListModel::DeviceRole),
                 int(ForwarderListModel::BindingProjectRole) }) {
            if (at.data(role).toString().contains(m_needle, Qt::CaseInsensitive))
                return true;
        }
        return false;
    }

private:
    QString m_needle;
    bool m_showRevoked = false;
};

} // namespace

ForwardersPage::ForwardersPage(HubApi *api, ForwardersClient *forwarders, QWidget *parent)
    : QWidget(parent)
    , m_api(api)
    , m_forwarders(forwarders)
    , m_filter(new ForwarderFilter(this))
    , m_search(new QLineEdit(this))
    , m_enroll(new QPushButton(tr("+ Enroll forwarder"), this))
    , m_showRevoked(new QCheckBox(this))
    , m_error(new PlainLabel(this))
    , m_empty(new PlainLabel(this))
    , m_cardLayout(new QVBoxLayout)
{
    m_filter->setSourceModel(forwarders->model());
    m_search->setObjectName(QStringLiteral("search"));
    m_search->setPlaceholderText(tr("Search by name, device or project"));
    m_search->setClearButtonEnabled(true);
    m_enroll->setObjectName(QStringLiteral("enroll"));
    m_showRevoked->setObjectName(QStringLiteral("showRevoked"));
    m_showRevoked->setToolTip(tr("Revoked forwarders can never connect again; they are kept "
                                 "for the record."));
    m_error->setObjectName(QStringLiteral("error"));
    m_error->setWordWrap(true);
    m_error->setVisible(false);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);

    auto *title = new PageTitle(tr("Device forwarders"), this);
    auto *bar = new QHBoxLayout;
    bar->addWidget(title);
    bar->addStretch();
    bar->addWidget(m_search, 1);
    bar->addWidget(m_showRevoked);
    bar->addWidget(m_enroll);

    auto *cardsHost = new QWidget;
    auto *hostLayout = new QVBoxLayout(cardsHost);
    hostLayout->addLayout(m_cardLayout);
    hostLayout->addWidget(m_empty);
    hostLayout->addStretch();
    auto *scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(cardsHost);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_error);
    layout->addWidget(scroll, 1);
    setTabOrder(m_search, m_showRevoked);
    setTabOrder(m_showRevoked, m_enroll);

    connect(m_search, &QLineEdit::textChanged, this,
        [this](const QString &text) { static_cast<ForwarderFilter *>(m_filter)->setNeedle(text); });
    connect(m_showRevoked, &QCheckBox::toggled, this,
        [this](bool show) { static_cast<ForwarderFilter *>(m_filter)->setShowRevoked(show); });
    connect(m_enroll, &QPushButton::clicked, this, &ForwardersPage::openEnroll);
    connect(forwarders, &ForwardersClient::errorChanged, this, [this](const QString &error) {
        m_error->setText(
            error.isEmpty() ? QString() : tr("Cannot load the forwarders: %1").arg(error));
        m_error->setVisible(!error.isEmpty());
    });
    connect(m_filter, &QAbstractItemModel::rowsInserted, this, &ForwardersPage::rebuildCards);
    connect(m_filter, &QAbstractItemModel::rowsRemoved, this, &ForwardersPage::rebuildCards);
    connect(m_filter, &QAbstractItemModel::rowsMoved, this, &ForwardersPage::rebuildCards);
    connect(m_filter, &QAbstractItemModel::modelReset, this, &ForwardersPage::rebuildCards);
    connect(m_filter, &QAbstractItemModel::layoutChanged, this, &ForwardersPage::rebuildCards);
    connect(m_filter, &QAbstractItemModel::dataChanged, this, &ForwardersPage::refreshCards);
    rebuildCards();
}

ForwarderCard *ForwardersPage::cardFor(qint64 forwarderId) const
{
    for (ForwarderCard *card : m_cards) {
        if (card->forwarderId() == forwarderId)
            return card;
    }
    return nullptr;
}

void ForwardersPage::rebuildCards()
{
    // Few enough cards that rebuilding is simpler than moving them about.
    qDeleteAll(m_cards);
    m_cards.clear();
    for (int row = 0; row < m_filter->rowCount(); ++row) {
        auto *card = new ForwarderCard(QPersistentModelIndex(m_filter->index(row, 0)), this);
        connect(card, &ForwarderCard::bindRequested, this, &ForwardersPage::openBind);
        connect(card, &ForwarderCard::unbindRequested, this, &ForwardersPage::openUnbind);
        connect(card, &ForwarderCard::testRequested, this, [this](qint64 id) {
            m_forwarders->test(id, this, [](const Result<QJsonObject> &) {});
        });
        connect(card, &ForwarderCard::revokeRequested, this, &ForwardersPage::openRevoke);
        connect(card, &ForwarderCard::reenrollRequested, this, &ForwardersPage::openReenroll);
        m_cardLayout->addWidget(card);
        m_cards.append(card);
    }
    const ForwarderListModel *all = m_forwarders->model();
    int revoked = 0;
    for (int row = 0; row < all->rowCount(); ++row)
        revoked += isRevoked(all->index(row, 0)) ? 1 : 0;
    m_showRevoked->setText(tr("Show revoked (%1)").arg(revoked));
    m_showRevoked->setVisible(revoked > 0 || m_showRevoked->isChecked());
    if (all->rowCount() == 0)
        m_empty->setText(tr("No device forwarders yet. Use + Enroll forwarder to lend a USB "
                            "device or a network segment to projects."));
    else if (m_search->text().trimmed().isEmpty())
        m_empty->setText(tr("Every forwarder here is revoked. Tick Show revoked to see them, or "
                            "use + Enroll forwarder for a new one."));
    else
        m_empty->setText(tr("No forwarder matches “%1”.").arg(m_search->text()));
    m_empty->setVisible(m_cards.isEmpty());
}

void ForwardersPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    m_forwarders->setTrafficWatched(true);
}

void ForwardersPage::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    m_forwarders->setTrafficWatched(false);
}

void ForwardersPage::refreshCards(const QModelIndex &first, const QModelIndex &last)
{
    for (int row = first.row(); row <= last.row() && row < m_cards.size(); ++row)
        m_cards.at(row)->refresh();
}

void ForwardersPage::openDialog(QDialog *dialog)
{
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

void ForwardersPage::openEnroll()
{
    openDialog(new EnrollDialog(m_forwarders, this));
}

void ForwardersPage::openReenroll(qint64 forwarderId)
{
    const int row = m_forwarders->model()->rowOf(forwarderId);
    if (row < 0)
        return;
    openDialog(new EnrollDialog(
        m_forwarders, forwarderId, m_forwarders->model()->forwarder(row).name, this));
}

void ForwardersPage::openBind(qint64 forwarderId)
{
    const int row = m_forwarders->model()->rowOf(forwarderId);
    auto *dialog = new BindDialog(m_forwarders, BindDialog::Mode::Bind,
        row >= 0 ? std::optional<api::Forwarder>(m_forwarders->model()->forwarder(row))
                 : std::nullopt,
        {}, this);
    const QPointer<BindDialog> guard(dialog);
    m_api->get(QStringLiteral("/api/projects"), dialog, [guard](const Result<QJsonObject> &answer) {
        const auto projects = answer
            ? api::listOf<api::Project>(*answer, QLatin1StringView("projects"))
            : Result<QList<api::Project>>(answer.error());
        if (!projects || !guard)
            return;
        QStringList paths;
        for (const api::Project &project : *projects)
            paths.append(project.path);
        guard->setProjects(paths);
    });
    openDialog(dialog);
}

void ForwardersPage::openUnbind(qint64 forwarderId)
{
    const int row = m_forwarders->model()->rowOf(forwarderId);
    const auto binding = m_forwarders->model()->binding(row);
    if (!binding || binding->id <= 0)
        return;
    openDialog(makeUnbindDialog(m_forwarders, binding->id,
        m_forwarders->model()->forwarder(row).name, binding->project, this));
}

void ForwardersPage::openRevoke(qint64 forwarderId)
{
    const int row = m_forwarders->model()->rowOf(forwarderId);
    const QString name = m_forwarders->model()->forwarder(row).name;
    const auto binding = m_forwarders->model()->binding(row);
    QString consequence
        = tr("%1 is cut off for good: its credential stops working and it can never connect again.")
              .arg(name);
    if (binding)
        consequence += QLatin1Char(' ')
            + tr("Its binding to %1 ends, and runs using the device lose it at once.")
                  .arg(binding->project);
    openDialog(new ReasonDialog(
        tr("Revoke %1").arg(name), consequence, tr("Revoke"), false,
        [this, forwarderId](const QString &reason, QObject *context, HubApi::Callback done) {
            m_forwarders->revoke(forwarderId, reason, context, std::move(done));
        },
        this));
}

} // namespace cloop::dashboard
