#include "app-dashboard/ui/forwardercard.h"

#include "common/api/enrolleddaemon.h"
#include "common/protocol/devicespec.h"

#include "app-dashboard/core/forwarderlistmodel.h"
#include "app-dashboard/core/plaintooltip.h"
#include "app-dashboard/core/timewords.h"
#include "app-dashboard/ui/allowaction.h"
#include "app-dashboard/ui/elidedlabel.h"
#include "app-dashboard/ui/plainlabel.h"
#include "app-dashboard/ui/statechip.h"
#include "app-dashboard/ui/themedicon.h"
#include "app-dashboard/ui/trafficgraph.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace cloop::dashboard {

namespace {

using Role = ForwarderListModel::Role;

QVariant valueOf(const QModelIndex &row, Role role)
{
    return row.data(role);
}

} // namespace

ForwarderCard::ForwarderCard(const QPersistentModelIndex &index, QWidget *parent)
    : QFrame(parent)
    , m_index(index)
    , m_forwarderId(index.data(ForwarderListModel::IdRole).toLongLong())
    , m_kindIcon(new QLabel(this))
    , m_nameLabel(new PlainLabel(this))
    , m_idLabel(new PlainLabel(this))
    , m_state(new StateChip(this))
    , m_deviceLabel(new PlainLabel(this))
    , m_bindingLabel(new ElidedLabel(this))
    , m_bindingEndLabel(new ElidedLabel(this))
    , m_traffic(new TrafficGraph(this))
    , m_testMark(new QLabel(this))
    , m_testLabel(new ElidedLabel(this))
    , m_actions(new QWidget(this))
    , m_bindButton(new QPushButton(tr("Bind…"), m_actions))
    , m_unbindButton(new QPushButton(tr("Unbind…"), m_actions))
    , m_testButton(new QPushButton(tr("Test"), m_actions))
    , m_reenrollButton(new QPushButton(tr("New enrollment command…"), m_actions))
    , m_revokeButton(new QPushButton(tr("Revoke…"), m_actions))
{
    setObjectName(QStringLiteral("forwarderCard"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);
    QFont nameFont = m_nameLabel->font();
    nameFont.setPointSizeF(nameFont.pointSizeF() * 1.2);
    nameFont.setBold(true);
    m_nameLabel->setFont(nameFont);
    m_nameLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_idLabel->setForegroundRole(QPalette::PlaceholderText);
    m_idLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_deviceLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_testMark->setTextFormat(Qt::PlainText);
    // Its colour is set as WindowText; on the card's Base a label would draw Text.
    m_testMark->setForegroundRole(QPalette::WindowText);
    m_testMark->setFixedWidth(m_testMark->fontMetrics().horizontalAdvance(QStringLiteral("✔ ")));
    m_testLabel->setObjectName(QStringLiteral("testResult"));
    m_testMark->setObjectName(QStringLiteral("testMark"));
    m_reenrollButton->setObjectName(QStringLiteral("reenroll"));

    auto *title = new QHBoxLayout;
    title->addWidget(m_kindIcon);
    title->addWidget(m_nameLabel);
    title->addWidget(m_idLabel);
    title->addStretch();
    title->addWidget(m_state);

    auto *testLine = new QHBoxLayout;
    testLine->setSpacing(2);
    testLine->addWidget(m_testMark);
    testLine->addWidget(m_testLabel, 1);

    auto *buttons = new QHBoxLayout(m_actions);
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addWidget(m_bindButton);
    buttons->addWidget(m_unbindButton);
    buttons->addWidget(m_testButton);
    buttons->addWidget(m_reenrollButton);
    buttons->addStretch();
    buttons->addWidget(m_revokeButton);

    // The graph beside what the card says, not below it: a card stays as
    // low as its words.
    auto *words = new QVBoxLayout;
    words->addWidget(m_deviceLabel);
    words->addWidget(m_bindingLabel);
    words->addWidget(m_bindingEndLabel);
    auto *details = new QHBoxLayout;
    // Aligned, not stretched: a stretch would make the card grow into any
    // height its page has spare.
    details->addLayout(words, 1);
    details->setAlignment(words, Qt::AlignTop);
    details->addWidget(m_traffic, 0, Qt::AlignTop);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(title);
    layout->addLayout(details);
    layout->addLayout(testLine);
    layout->addWidget(m_actions);

    const QPalette colours = palette();
    m_bindButton->setIcon(themedIcon(QStringLiteral("bind"), colours));
    m_unbindButton->setIcon(themedIcon(QStringLiteral("unbind"), colours));
    m_testButton->setIcon(themedIcon(QStringLiteral("test"), colours));
    m_revokeButton->setIcon(themedIcon(QStringLiteral("revoke"), colours));
    connect(
        m_bindButton, &QPushButton::clicked, this, [this] { Q_EMIT bindRequested(m_forwarderId); });
    connect(m_unbindButton, &QPushButton::clicked, this,
        [this] { Q_EMIT unbindRequested(m_forwarderId); });
    connect(
        m_testButton, &QPushButton::clicked, this, [this] { Q_EMIT testRequested(m_forwarderId); });
    connect(m_reenrollButton, &QPushButton::clicked, this,
        [this] { Q_EMIT reenrollRequested(m_forwarderId); });
    connect(m_revokeButton, &QPushButton::clicked, this,
        [this] { Q_EMIT revokeRequested(m_forwarderId); });
    refresh();
}

QString ForwarderCard::stateText() const
{
    return m_state->text();
}

QString ForwarderCard::bindingText() const
{
    const QString end = m_bindingEndLabel->fullText();
    return end.isEmpty() ? m_bindingLabel->fullText()
                         : m_bindingLabel->fullText() + QStringLiteral(" · ") + end;
}

QString ForwarderCard::testText() const
{
    const QString mark = m_testMark->text().trimmed();
    return mark.isEmpty() ? m_testLabel->fullText()
                          : mark + QLatin1Char(' ') + m_testLabel->fullText();
}

std::optional<bool> ForwarderCard::testPassed() const
{
    return m_testPassed;
}

void ForwarderCard::refresh()
{
    if (!m_index.isValid())
        return;
    const QModelIndex row = m_index;
    const bool revoked = api::EnrolledDaemon::parseState(valueOf(row, Role::StateRole).toString())
        == api::EnrolledDaemon::State::Revoked;
    m_nameLabel->setText(valueOf(row, Role::NameRole).toString());
    m_idLabel->setText(QStringLiteral("#%1").arg(m_forwarderId));
    m_idLabel->setToolTip(
        tr("Forwarder id %1, as the CLI names it: cloop forward test %1").arg(m_forwarderId));
    const bool usb = protocol::parseDeviceKind(valueOf(row, Role::KindRole).toString())
        == protocol::DeviceSpec::Kind::Usb;
    m_kindIcon->setPixmap(
        themedIcon(usb ? QStringLiteral("usb") : QStringLiteral("segment"), palette())
            .pixmap(QSize(20, 20), revoked ? QIcon::Disabled : QIcon::Normal));
    m_kindIcon->setToolTip(usb ? tr("a USB device") : tr("a network segment"));
    const QString deviceName = valueOf(row, Role::DeviceNameRole).toString();
    m_deviceLabel->setText(deviceName.isEmpty()
            ? valueOf(row, Role::DeviceRole).toString()
            : QStringLiteral("%1 · %2").arg(valueOf(row, Role::DeviceRole).toString(), deviceName));
    // A revoked forwarder is history: its words are dimmed, nothing else.
    for (QLabel *label : { m_nameLabel, m_deviceLabel })
        label->setForegroundRole(revoked ? QPalette::PlaceholderText : QPalette::WindowText);

    refreshState(row);
    refreshBinding(row, revoked);
    refreshTest(row);
    refreshTraffic(row);
    refreshActions(row);
}

void ForwarderCard::refreshTraffic(const QModelIndex &row)
{
    // Only a connected forwarder streams; before the hub's first answer
    // there is nothing to draw.
    const auto history = valueOf(row, Role::TrafficRole).value<TrafficHistory>();
    m_traffic->setHistory(history);
    m_traffic->setVisible(valueOf(row, Role::ConnectedRole).toBool() && !history.isEmpty());
}

void ForwarderCard::refreshState(const QModelIndex &row)
{
    using State = api::EnrolledDaemon::State;
    const auto state = api::EnrolledDaemon::parseState(valueOf(row, Role::StateRole).toString());
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const bool connected = valueOf(row, Role::ConnectedRole).toBool();
    // On a cluster, which member holds the session matters to an operator
    // reading logs; on one hub it says nothing, so it is only in the tooltip.
    const QString member = valueOf(row, Role::HubMemberRole).toString();
    const QString heldBy = member.isEmpty()
        ? QString()
        : QLatin1Char(' ') + tr("Its session is held by hub member %1.").arg(member);
    if (connected && valueOf(row, Role::DeviceUnpluggedRole).toBool()) {
        m_state->setState(StateChip::Tone::Warning, tr("Unplugged"));
        m_state->setToolTip(
            plainToolTip(tr("Connected, but its USB device is unplugged: runs cannot use it "
                            "until it is plugged in again.")
                + heldBy));
    } else if (connected) {
        m_state->setState(StateChip::Tone::Good, tr("Live"));
        m_state->setToolTip(plainToolTip(tr("Connected to the hub.") + heldBy));
    } else if (state == State::Revoked) {
        const QDateTime at = valueOf(row, Role::RevokedAtRole).toDateTime();
        m_state->setState(StateChip::Tone::Bad,
            at.isValid() ? tr("Revoked %1").arg(describeMoment(at, now)) : tr("Revoked"));
        m_state->setToolTip(
            plainToolTip(tr("Revoked: its credential no longer works and it can never "
                            "connect again.")));
    } else if (state == State::AwaitingEnrollment) {
        m_state->setState(StateChip::Tone::Pending, tr("Awaiting enrollment"));
        m_state->setToolTip(plainToolTip(
            tr("Enrolled on the hub %1; its one-time command has not been run "
               "on its machine yet.")
                .arg(describeMoment(valueOf(row, Role::CreatedAtRole).toDateTime(), now))));
    } else {
        const QDateTime seen = valueOf(row, Role::LastSeenRole).toDateTime();
        m_state->setState(StateChip::Tone::Neutral,
            seen.isValid() ? tr("Offline since %1").arg(describeMoment(seen, now)) : tr("Offline"));
        m_state->setToolTip(
            plainToolTip(tr("Not connected to the hub: runs cannot use its device.")));
    }
}

void ForwarderCard::refreshBinding(const QModelIndex &row, bool revoked)
{
    const qint64 bindingId = valueOf(row, Role::BindingIdRole).toLongLong();
    if (bindingId <= 0) {
        m_bindingLabel->setFullText(revoked ? QString() : tr("Not bound"));
        m_bindingLabel->setToolTip(QString());
        m_bindingLabel->setVisible(!revoked);
        // The line stays, empty: binding and unbinding do not move the cards below.
        m_bindingEndLabel->setFullText(QString());
        m_bindingEndLabel->setVisible(!revoked);
        return;
    }
    QStringList parts { tr("Bound to %1").arg(valueOf(row, Role::BindingProjectRole).toString()) };
    if (const QString executor = valueOf(row, Role::BindingExecutorRole).toString();
        !executor.isEmpty())
        parts.append(tr("on %1 only").arg(executor));
    const QString target = valueOf(row, Role::BindingTargetRole).toString();
    const QString address = valueOf(row, Role::BindingAddressRole).toString();
    if (!target.isEmpty() || !address.isEmpty())
        parts.append(tr("sandbox interface %1")
                         .arg(QStringList { target, address }.join(QLatin1Char(' ')).trimmed()));
    parts.append(tr("by %1").arg(valueOf(row, Role::BindingCreatedByRole).toString()));
    m_bindingLabel->setFullText(parts.join(QStringLiteral(" · ")));
    m_bindingLabel->setToolTip(plainToolTip(m_bindingLabel->fullText()));
    m_bindingLabel->setVisible(true);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QDateTime until = valueOf(row, Role::BindingExpiresRole).toDateTime();
    m_bindingEndLabel->setFullText(
        tr("until %1 (%2)").arg(describeMoment(until, now), describeTimeLeft(until, now)));
    m_bindingEndLabel->setVisible(true);
}

void ForwarderCard::refreshTest(const QModelIndex &row)
{
    const bool revoked = api::EnrolledDaemon::parseState(valueOf(row, Role::StateRole).toString())
        == api::EnrolledDaemon::State::Revoked;
    const QVariant passed = valueOf(row, Role::TestPassedRole);
    const bool testing = valueOf(row, Role::TestRunningRole).toBool();
    m_testPassed.reset();
    QPalette markColours = m_testMark->palette();
    if (testing) {
        m_testMark->setText(QString());
        m_testLabel->setFullText(tr("Testing…"));
        m_testLabel->setForegroundRole(QPalette::WindowText);
        m_testLabel->setToolTip(plainToolTip(tr("Asking the forwarder what its device shows")));
    } else if (!passed.isValid()) {
        m_testMark->setText(QString());
        m_testLabel->setFullText(tr("Not tested yet"));
        m_testLabel->setForegroundRole(QPalette::PlaceholderText);
        m_testLabel->setToolTip(
            plainToolTip(tr("Test asks the forwarder what its device shows, without lending it")));
    } else {
        m_testPassed = passed.toBool();
        const StateChip::Tone tone = *m_testPassed ? StateChip::Tone::Good : StateChip::Tone::Bad;
        m_testMark->setText(*m_testPassed ? QStringLiteral("✔") : QStringLiteral("✘"));
        markColours.setColor(QPalette::WindowText, toneColor(tone, palette()));
        const QString when = describeMoment(
            valueOf(row, Role::TestFinishedAtRole).toDateTime(), QDateTime::currentDateTimeUtc());
        const QString verdict
            = *m_testPassed ? tr("Passed %1").arg(when) : tr("Failed %1").arg(when);
        m_testLabel->setFullText(
            verdict + QStringLiteral(" · ") + valueOf(row, Role::TestSummaryRole).toString());
        m_testLabel->setForegroundRole(QPalette::WindowText);
        m_testLabel->setToolTip(plainToolTip(
            verdict + QLatin1Char('\n') + valueOf(row, Role::TestDetailsRole).toString()));
    }
    m_testMark->setPalette(markColours);
    m_testMark->setVisible(!revoked);
    m_testLabel->setVisible(!revoked);
}

void ForwarderCard::refreshActions(const QModelIndex &row)
{
    using State = api::EnrolledDaemon::State;
    const auto state = api::EnrolledDaemon::parseState(valueOf(row, Role::StateRole).toString());
    const bool revoked = state == State::Revoked;
    const bool awaiting = state == State::AwaitingEnrollment;
    const bool connected = valueOf(row, Role::ConnectedRole).toBool();
    const bool testing = valueOf(row, Role::TestRunningRole).toBool();
    const qint64 bindingId = valueOf(row, Role::BindingIdRole).toLongLong();
    const QString project = valueOf(row, Role::BindingProjectRole).toString();

    // A revoked forwarder has nothing left to do: no buttons at all.
    m_actions->setVisible(!revoked);
    allowAction(m_bindButton, bindingId == 0, tr("Lend its device to one project's runs"),
        tr("Already bound to %1: unbind it first").arg(project));
    allowAction(m_unbindButton, bindingId > 0, tr("End the binding to %1 now").arg(project),
        tr("Nothing is bound"));
    QString whyNoTest;
    if (awaiting)
        whyNoTest = tr("It has not connected yet: run its enrollment command first");
    else if (!connected)
        whyNoTest = tr("It is offline: only a connected forwarder can be tested");
    else if (testing)
        whyNoTest = tr("A Test is running");
    allowAction(m_testButton, whyNoTest.isEmpty(),
        tr("Ask the forwarder what its device shows, without lending it"), whyNoTest);
    m_testButton->setVisible(!awaiting);
    m_reenrollButton->setVisible(awaiting);
    allowAction(m_reenrollButton, awaiting,
        tr("Issue a new one-time command (the earlier one stops working)"), QString());
    allowAction(m_revokeButton, true, tr("Cut it off for good"), QString());
}

} // namespace cloop::dashboard
