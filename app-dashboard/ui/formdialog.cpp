#include "app-dashboard/ui/formdialog.h"

#include "app-dashboard/ui/plainlabel.h"

#include <QAbstractButton>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace cloop::dashboard {

FormDialog::FormDialog(const QString &title, const QString &actionText, QWidget *parent)
    : QDialog(parent)
    , m_message(new PlainLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(title);
    m_message->setObjectName(QStringLiteral("message"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_buttons->button(QDialogButtonBox::Ok)->setText(actionText);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_message);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &FormDialog::submit);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QPushButton *FormDialog::actionButton() const
{
    const auto buttons = m_buttons->buttons();
    for (QAbstractButton *button : buttons) {
        if (m_buttons->buttonRole(button) == QDialogButtonBox::AcceptRole)
            return qobject_cast<QPushButton *>(button);
    }
    return nullptr;
}

namespace {

// The focusable widgets a layout holds, in the order they appear (rows,
// then columns; nested layouts and the pages of a stack included).
void collectFields(QLayout *layout, QList<QWidget *> &out)
{
    for (int i = 0; i < layout->count(); ++i) {
        QLayoutItem *item = layout->itemAt(i);
        if (QLayout *inner = item->layout()) {
            collectFields(inner, out);
        } else if (QWidget *widget = item->widget()) {
            if (widget->layout())
                collectFields(widget->layout(), out);
            if (widget->focusPolicy() & Qt::TabFocus)
                out.append(widget);
        }
    }
}

} // namespace

void FormDialog::setContent(QLayout *content)
{
    static_cast<QVBoxLayout *>(layout())->insertLayout(0, content);
    // The buttons were made first; Tab should walk the fields top to bottom
    // and reach them last, and typing should start in the first field.
    QList<QWidget *> chain;
    collectFields(content, chain);
    for (QAbstractButton *button : m_buttons->buttons())
        chain.append(button);
    for (qsizetype i = 1; i < chain.size(); ++i)
        QWidget::setTabOrder(chain.at(i - 1), chain.at(i));
    if (!chain.isEmpty())
        chain.first()->setFocus();
}

void FormDialog::setFormWidth(int width)
{
    // The buttons span the dialog: their least width is the layout's, and the
    // layout keeps the dialog's least size, height included, up to date.
    const QMargins margins = layout()->contentsMargins();
    m_buttons->setMinimumWidth(width - margins.left() - margins.right());
}

void FormDialog::revalidate()
{
    if (m_settled)
        return;
    const QString wrong = problem();
    m_message->setText(wrong);
    actionButton()->setEnabled(wrong.isEmpty());
}

QString FormDialog::busyText() const
{
    return tr("Asking the hub…");
}

QString FormDialog::refusalText(const Error &error) const
{
    return tr("The hub refused: %1").arg(error.message);
}

void FormDialog::succeeded(const QJsonObject &)
{
    accept();
}

void FormDialog::settle(const QString &closeText)
{
    m_settled = true;
    m_message->clear();
    // Closing after success is accepting: the one button takes that role.
    m_buttons->clear();
    m_buttons->addButton(closeText, QDialogButtonBox::AcceptRole)
        ->setObjectName(QStringLiteral("close"));
}

void FormDialog::submit()
{
    if (m_settled) {
        accept();
        return;
    }
    if (!problem().isEmpty())
        return;
    m_buttons->setEnabled(false);
    m_message->setText(busyText());
    carryOut(this, [this](const Result<QJsonObject> &answer) {
        m_buttons->setEnabled(true);
        if (answer)
            succeeded(*answer);
        else
            m_message->setText(refusalText(answer.error()));
    });
}

void openModal(QDialog *dialog)
{
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    dialog->open();
}

} // namespace cloop::dashboard
