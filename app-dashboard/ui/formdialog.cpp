#include "app-dashboard/ui/formdialog.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace cloop::dashboard {

FormDialog::FormDialog(const QString &title, const QString &actionText, QWidget *parent)
    : QDialog(parent),
      m_message(new QLabel(this)),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
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

void FormDialog::setContent(QLayout *content)
{
    static_cast<QVBoxLayout *>(layout())->insertLayout(0, content);
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
    m_buttons->addButton(closeText, QDialogButtonBox::AcceptRole)->setObjectName(QStringLiteral("close"));
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
